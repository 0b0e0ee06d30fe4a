// The library's COLL_* settings, read once per communicator (docs/configuration.md lists them).
#pragma once

#include <optional>
#include <string>

#include "algorithms/collective.hpp"
#include "transport/ucx_transport.hpp"

namespace coll {

struct Config {
  double timeout_s = 60;           // COLL_TIMEOUT
  std::string algorithm = "ring";  // COLL_ALGO
  std::optional<int> node;         // COLL_NODE: node id override (one machine, several nodes)
  bool check_arguments = true;     // COLL_CHECK_ARGS: ranks compare (count, type, op, algorithm)
  Tuning tuning;                   // COLL_SEGMENT_BYTES, COLL_WINDOW
  UcxOptions ucx;                  // COLL_UCX_LOCAL_TLS, COLL_UCX_NET_TLS, COLL_UCX_NET_DEVICES

  static Config from_environment();  // throws InvalidArgument naming a malformed variable
};

}  // namespace coll
