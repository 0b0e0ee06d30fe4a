// Named parameter sets for the cost model, for machines that cannot be measured from here
// (the paper's P40 cluster, fitted to its group's all-reduce fits from their later public code,
// assumed to describe a cluster of that class) and as the fallback when this
// machine has no calibration file; and user presets read from a small file.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/model/link_params.hpp"

namespace coll::model {

std::optional<CostParams> find_preset(std::string_view name);  // nullopt when unknown
const std::vector<std::string>& preset_names();
// A user preset: a "key = value" file (see preset.cc). Throws coll::Error (InvalidArgument)
// naming the file, the line and the problem.
CostParams load_preset_file(const std::string& path);
// A named preset, else (when the text holds a '/' or names an existing file) a preset file.
// Throws coll::Error (InvalidArgument) naming `what` and the known presets, or the file's problem.
CostParams preset_or_throw(std::string_view name, std::string_view what);

}  // namespace coll::model
