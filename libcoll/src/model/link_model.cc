#include "model/link_model.hpp"

#include <algorithm>
#include <cstdio>

namespace coll::model {

CostParams sharing_cores(const CostParams& params, double ranks_per_core) {
  if (!(ranks_per_core > 1)) return params;
  CostParams shared = params;
  const double hand_over = (ranks_per_core - 1) * kCoreHandOverSeconds;
  for (LinkParams* link : {&shared.intra, &shared.inter}) {
    link->alpha_s += hand_over;
    link->beta_s_per_byte *= ranks_per_core;
  }
  // The hand-off the ranks timed at connect is then a scheduler's hand-over too, as noisy as it:
  // the measured round replaces it.
  if (shared.transport.slot_handoff_s > 0) {
    shared.transport.slot_handoff_s = (ranks_per_core - 1) * kSlotHandOverSeconds;
  }
  shared.staging_beta_s_per_byte *= ranks_per_core;
  shared.gamma_s_per_byte *= ranks_per_core;
  char note[96];
  std::snprintf(note, sizeof note, "; %.2g ranks per core: beta, gamma x%.2g, alpha +%.0f us",
                ranks_per_core, ranks_per_core, hand_over * 1e6);
  shared.source += note;
  return shared;
}

double phase_alpha(const CostParams& params, int intra, int inter) {
  if (!params.charging.alpha_once_per_phase)
    return intra * params.intra.alpha_s + inter * params.inter.alpha_s;
  return std::max(intra > 0 ? params.intra.alpha_s : 0.0, inter > 0 ? params.inter.alpha_s : 0.0);
}

double intra_beta(const CostParams& params, int flows) {
  return std::max(params.intra.beta_s_per_byte, flows * params.staging_beta_s_per_byte);
}

StepCost step_cost(const CostParams& params, const Shape& shape, const Flows& flows, double bytes) {
  bool any_intra = false;
  // Inter-node flows are counted per NIC (node), or per rank where the nodes have none.
  const std::size_t ends =
      static_cast<std::size_t>(params.transport.nic_shared ? shape.nodes : shape.ranks);
  auto end_of = [&](int rank) {
    return static_cast<std::size_t>(
        params.transport.nic_shared ? shape.node_of_rank[static_cast<std::size_t>(rank)] : rank);
  };
  std::vector<int> out(ends), in(ends), local(static_cast<std::size_t>(shape.nodes));
  for (const auto& [from, to] : flows) {
    if (shape.same_node(from, to)) {
      any_intra = true;
      ++local[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(from)])];
    } else {
      ++out[end_of(from)];
      ++in[end_of(to)];
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
