// How well a modelled cell's exposed communication is determined: the part of communication
// that backward does not hide can be a small difference of large times, which a few per cent
// more or less communication moves by much. Such a cell's exposed column cannot be compared
// (emulation against model, or strategy against strategy) within that few per cent, and both
// the modelled and the emulated tables mark it.
#pragma once

#include <functional>
#include <string>

#include "study/paper_tables.hpp"

namespace coll::study {

// The communication error an emulation within a few per cent of the model has
// (docs/emulation.md), and the swing of the exposed time beyond which it cannot be compared.
inline constexpr double kCommTolerance = 0.05;
inline constexpr double kMaxExposedSwing = 0.15;

// How the modelled exposed time of a cell moves with its communication: relative changes at
// kCommTolerance more and less communication (the compute's timing unchanged). `remodel` models
// the same cell under other inputs (a scaled compute).
struct ExposedSwing {
  double more = 0, less = 0;
};
using Remodel = std::function<TableCell(const TableInputs&)>;
ExposedSwing exposed_swing(const TableInputs& inputs, const TableCell& cell,
                           const Remodel& remodel);

// "exposed time ill-conditioned: 5 % more communication moves the modelled exposed time by
// +40 %, ..." when the swing exceeds kMaxExposedSwing; "" otherwise.
std::string ill_conditioned_warning(const ExposedSwing& swing);

}  // namespace coll::study
