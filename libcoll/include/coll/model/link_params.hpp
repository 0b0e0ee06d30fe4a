// The parameters of the alpha-beta-gamma cost model: per link class (same node, across nodes) a
// latency alpha and a transfer cost beta, plus the reduction cost gamma, and where they came from.
#pragma once

#include <string>

namespace coll::model {

struct LinkParams {
  double alpha_s = 0;          // per-message latency, seconds
  double beta_s_per_byte = 0;  // seconds per byte on one link direction (1 / bandwidth)
};

struct CostParams {
  LinkParams intra;  // two ranks on the same node
  LinkParams inter;  // two ranks on different nodes (one NIC per node, shared by its ranks)
  double gamma_s_per_byte = 0;  // element-wise reduction, seconds per byte of output
  std::string source;           // "preset this-vm", "calibration /path (host ...)", ...
  // Host staging (GPUs of 2017 frameworks copied through host memory): seconds per byte of the
  // node's staging path, shared by every intra-node flow of that node in one step, so a step
  // with f such flows moves each at max(intra beta, f * staging beta). 0: no shared path.
  double staging_beta_s_per_byte = 0;
};

}  // namespace coll::model
