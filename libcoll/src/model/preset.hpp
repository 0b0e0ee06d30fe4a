// Named parameter sets for the cost model, for machines that cannot be measured from here
// (the paper's P40 cluster) and as the fallback when this machine has no calibration file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/link_params.hpp"

namespace coll::model {

std::optional<CostParams> find_preset(std::string_view name);  // nullopt when unknown
const std::vector<std::string>& preset_names();
// Like find_preset, but throws coll::Error (InvalidArgument) naming `what` and the known presets.
CostParams preset_or_throw(std::string_view name, std::string_view what);

}  // namespace coll::model
