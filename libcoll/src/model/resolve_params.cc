#include "coll/model/resolve_params.hpp"

#include "coll/model/calibration.hpp"
#include "coll/model/preset.hpp"

namespace coll::model {

CostParams resolve_params(const std::string& preset, const std::string& setting) {
  if (!preset.empty()) {
    CostParams params = preset_or_throw(preset, setting);
    params.source += " (" + setting + ")";
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
