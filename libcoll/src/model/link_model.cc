#include "model/link_model.hpp"

#include <algorithm>

namespace coll::model {

StepCost step_cost(const CostParams& params, const Shape& shape, const Flows& flows, double bytes) {
  bool any_intra = false;
  std::vector<int> out(static_cast<std::size_t>(shape.nodes)), in(out.size());
  for (const auto& [from, to] : flows) {
    if (shape.same_node(from, to)) {
      any_intra = true;
    } else {
      ++out[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(from)])];
      ++in[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(to)])];
    }
  }
  const int sharing =
      std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
  StepCost intra{params.intra.alpha_s, bytes * params.intra.beta_s_per_byte, false};
  StepCost inter{params.inter.alpha_s, bytes * params.inter.beta_s_per_byte * sharing, true};
  if (sharing == 0) return intra;
  if (!any_intra) return inter;
  return intra.latency + intra.bandwidth > inter.latency + inter.bandwidth ? intra : inter;
}

}  // namespace coll::model
