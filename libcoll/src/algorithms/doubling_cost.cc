#include "algorithms/doubling_cost.hpp"

#include <string>

#include "algorithms/halving_doubling_schedule.hpp"
#include "model/link_model.hpp"

namespace coll {

model::Prediction doubling_cost(std::string_view name, DoublingVolume volume,
                                const model::CostParams& params, const model::Shape& shape,
                                double m) {
  model::Prediction out{std::string(name)};
  if (shape.ranks < 2) return out;
  const HalvingDoublingSchedule pairs(shape.ranks);
  int inter_steps = 0;
  auto add = [&](const MemberPairs& flows, double bytes, double reduced, int times) {
    const model::StepCost step = model::step_cost(params, shape, flows, bytes);
    out.latency_s += times * step.latency;
    out.bandwidth_s += times * step.bandwidth;
    out.reduction_s += reduced * params.gamma_s_per_byte;
    inter_steps += step.inter ? times : 0;
  };
  if (pairs.extra() > 0) {
    add(pairs.fold_in(), m, m, 1);
    add(pairs.hand_back(), m, 0, 1);
  }
  const bool halving = volume == DoublingVolume::halving;
  double bytes = m;
  for (int step = 0; step < pairs.steps(); ++step) {
    if (halving) bytes /= 2;
    add(pairs.step_pairs(step), bytes, bytes, halving ? 2 : 1);
  }
  const int steps = (halving ? 2 : 1) * pairs.steps() + (pairs.extra() > 0 ? 2 : 0);
  out.detail = model::detail_text(
      "%d steps%s (%d on the inter-node link)%s", steps, halving ? "" : " of the whole vector",
      inter_steps,
      pairs.extra() > 0 ? model::detail_text(", %d extra ranks fold in", pairs.extra()).c_str()
                        : "");
  return out;
}

}  // namespace coll
