#include "study/exposed_conditioning.hpp"

#include <algorithm>
#include <cmath>

namespace coll::study {

ExposedSwing exposed_swing(const TableInputs& inputs, const TableCell& cell,
                           const Remodel& remodel) {
  ExposedSwing swing;
  if (cell.exposed_ms <= 0) return swing;
  // Communication c times the model's, against the same compute, is the model with compute / c,
  // every time then multiplied by c.
  auto exposed_at = [&](double comm_factor) {
    TableInputs scaled = inputs;
    scaled.compute_scale /= comm_factor;
    return comm_factor * remodel(scaled).exposed_ms / cell.exposed_ms - 1;
  };
  swing.more = exposed_at(1 + kCommTolerance);
  swing.less = exposed_at(1 - kCommTolerance);
  return swing;
}

std::string ill_conditioned_warning(const ExposedSwing& swing) {
  if (std::max(std::abs(swing.more), std::abs(swing.less)) <= kMaxExposedSwing) return "";
  return "exposed time ill-conditioned: " + percent(kCommTolerance) +
         " more communication moves the modelled exposed time by " + signed_percent(swing.more) +
         ", " + percent(kCommTolerance) + " less by " + signed_percent(swing.less) +
         " (compare the communication columns)";
}

}  // namespace coll::study
