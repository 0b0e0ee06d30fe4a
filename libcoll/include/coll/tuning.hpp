// The algorithms' tuning knobs, read from COLL_* by the communicator; the cost model prices with
// them too, so tools that predict (collbench --explain, --model-only) see the same values.
#pragma once

#include <cstddef>
#include <string>

namespace coll {

struct Tuning {
  std::size_t segment_bytes = 256 << 10;  // COLL_SEGMENT_BYTES: pipelining unit
  int window = 4;                         // COLL_WINDOW: receives kept in flight
  int ps_servers = 0;               // COLL_PS_SERVERS: parameter-server shards (0: every rank)
  bool ps_dedicated = false;        // COLL_PS_DEDICATED: servers are the last ranks, not spread
  std::string hier_intra = "ring";  // COLL_HIER_INTRA: hierarchical's intra-node algorithm
  std::string hier_inter = "ring";  // COLL_HIER_INTER: hierarchical's inter-node all-reduce
  // COLL_CHECK_ARGS: ranks compare their calls before each collective, a round of messages the
  // cost model adds to algorithms that do not carry the check in their own first message.
  bool check_arguments = true;
};

}  // namespace coll
