#include "coll/model/resolve_params.hpp"

#include "coll/env.hpp"
#include "coll/model/calibration.hpp"
#include "coll/model/preset.hpp"

namespace coll::model {

CostParams resolve_params() {
  if (auto name = env_string("COLL_COST_PRESET")) {
    CostParams params = preset_or_throw(*name, "COLL_COST_PRESET");
    params.source += " (COLL_COST_PRESET)";
    return params;
  }
  const std::string path = calibration_path();
  CostParams params = *find_preset("this-vm");
  if (auto calibration = load_calibration(path)) {
    if (calibration->host == this_host()) return calibration->params;
    params.source += " (calibration file " + path + " was measured on host '" + calibration->host +
                     "', this is '" + this_host() + "')";
  } else {
    params.source += " (no calibration file at " + path + ")";
  }
  return params;
}

}  // namespace coll::model
