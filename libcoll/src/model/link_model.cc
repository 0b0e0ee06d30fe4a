#include "model/link_model.hpp"

#include <algorithm>

namespace coll::model {

double intra_beta(const CostParams& params, int flows) {
  return std::max(params.intra.beta_s_per_byte, flows * params.staging_beta_s_per_byte);
}

StepCost step_cost(const CostParams& params, const Shape& shape, const Flows& flows, double bytes) {
  bool any_intra = false;
  std::vector<int> out(static_cast<std::size_t>(shape.nodes)), in(out.size()), local(out.size());
  for (const auto& [from, to] : flows) {
    if (shape.same_node(from, to)) {
      any_intra = true;
      ++local[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(from)])];
    } else {
      ++out[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(from)])];
      ++in[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(to)])];
    }
  }
  const int sharing =
      std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
  const int staged = *std::max_element(local.begin(), local.end());
  StepCost intra{params.intra.alpha_s, bytes * intra_beta(params, staged), false};
  StepCost inter{params.inter.alpha_s, bytes * params.inter.beta_s_per_byte * sharing, true};
  if (sharing == 0) return intra;
  if (!any_intra) return inter;
  return intra.latency + intra.bandwidth > inter.latency + inter.bandwidth ? intra : inter;
}

}  // namespace coll::model
