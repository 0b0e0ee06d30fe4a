// The library's COLL_* settings, read once per communicator (README.md's table lists them).
#pragma once

#include <optional>
#include <string>

#include "algorithms/collective.hpp"
#include "transport/ucx_transport.hpp"

namespace coll {

struct Config {
  double timeout_s = 60;           // COLL_TIMEOUT
  std::string algorithm = "auto";  // COLL_ALGO: a registered name, or the cost model's pick
  std::optional<int> node;         // COLL_NODE: node id override (one machine, several nodes)
  bool check_arguments = true;     // COLL_CHECK_ARGS: ranks compare (count, type, op, algorithm)
  Tuning tuning;   // COLL_SEGMENT_BYTES, COLL_WINDOW, COLL_PS_SERVERS, COLL_PS_DEDICATED,
                   // COLL_HIER_INTRA, COLL_HIER_INTER
  UcxOptions ucx;  // COLL_UCX_LOCAL_TLS, COLL_UCX_NET_TLS, COLL_UCX_NET_DEVICES

  static Config from_environment();  // throws InvalidArgument naming a malformed variable
};

}  // namespace coll
