// collbench --calibrate: measure this machine's cost-model parameters and save them where the
// library looks for them (COLL_CALIBRATION_FILE, else ~/.cache/libcoll/calibration.txt).
#pragma once

#include "coll/comm.hpp"

namespace collbench {

// Every rank calls it; rank 0 saves the file and prints the fitted parameters. Returns the
// process exit status.
int run_calibration(coll::Comm& comm);

}  // namespace collbench
