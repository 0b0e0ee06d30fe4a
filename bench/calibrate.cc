#include "calibrate.hpp"

#include <cstdio>

#include "coll/model/calibration.hpp"
#include "explain.hpp"

namespace collbench {

int run_calibration(coll::Comm& comm) {
  namespace model = coll::model;
  const model::Calibration calibration = model::calibrate(comm);
  if (comm.rank() != 0) return 0;
  const std::string path = model::calibration_path();
  model::save_calibration(calibration, path);
  std::printf("# collbench --calibrate: %d ranks on %d node(s), host %s\n", comm.size(),
              comm.num_nodes(), calibration.host.c_str());
  std::printf("%s", describe_params(calibration.params).c_str());
  std::printf("# saved to %s (COLL_CALIBRATION_FILE overrides the path)\n", path.c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace collbench
