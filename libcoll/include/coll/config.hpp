// The communicator's COLL_* settings, read once per communicator (README lists them). Each layer
// below reads its own: the UCX transport its COLL_UCX_*, the logger COLL_DEBUG.
#pragma once

#include <optional>
#include <string>

#include "coll/tuning.hpp"

namespace coll {

struct Config {
  double timeout_s = 60;           // COLL_TIMEOUT
  std::string algorithm = "auto";  // COLL_ALGO: a registered name, or the cost model's pick
  std::string transport = "auto";  // COLL_TRANSPORT: a registered transport (auto, ucx, ...)
  std::optional<int> node;         // COLL_NODE: node id override (one machine, several nodes)
  // COLL_COST_PRESET: the cost parameters `auto` prices with, a preset name or file; empty: the
  // calibration file if it was measured on this host, else "this-vm" (model::resolve_params).
  std::string cost_preset;
  // COLL_COMPUTE_THREADS: threads of each rank that compute while its collectives run (DDP's
  // backward beside the bucket all-reduces). A waiting rank spins only where every rank's
  // threads, these and its own, have a core each; otherwise it yields and sleeps, leaving the
  // core to the computation. The torch backend defaults it to torch's intra-op threads.
  int compute_threads = 0;
  // COLL_SEGMENT_BYTES, COLL_NET_SEGMENT_BYTES, COLL_WINDOW, COLL_CHECK_ARGS, and in
  // tuning.algorithm_options the variables algorithms declare (COLL_PS_*, COLL_HIER_*).
  Tuning tuning;

  // Throws InvalidArgument naming a malformed variable (COLL_DEBUG included).
  static Config from_environment();
};

}  // namespace coll
