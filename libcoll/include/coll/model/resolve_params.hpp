// Which cost parameters a communicator uses (resolved once per communicator, see Selector).
#pragma once

#include "coll/model/link_params.hpp"

namespace coll::model {

// COLL_COST_PRESET=name if set; else the calibration file (calibration_path()) if present and
// measured on this host; else the "this-vm" preset. `source` says which, and why a calibration
// file was passed over. Throws coll::Error on an unknown preset or a malformed calibration file.
CostParams resolve_params();

}  // namespace coll::model
