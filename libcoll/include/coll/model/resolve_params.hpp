// Which cost parameters a communicator uses (resolved once per communicator, see Selector).
#pragma once

#include "coll/model/link_params.hpp"

namespace coll::model {

// The preset `preset` (a name or a preset file; Config::cost_preset, from COLL_COST_PRESET, and
// `setting` names where it came from in errors) if not empty; else the calibration file
// (calibration_path()) if present and measured on this host; else the "this-vm" preset. `source`
// says which, and why a calibration file was passed over. Throws coll::Error on an unknown preset
// or a malformed calibration file.
CostParams resolve_params(const std::string& preset, const std::string& setting);

}  // namespace coll::model
