// The algorithms' tuning knobs, read from COLL_* by the communicator; the cost model prices with
// them too, so tools that predict (collbench --explain, --model-only) see the same values.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>

namespace coll {

// What COLL_HIER_INTER=auto chooses among: the inter-node algorithm whose composition (the whole
// hierarchical all-reduce with it) the cost model prices fastest for the call.
inline constexpr std::array<std::string_view, 2> kHierInterCandidates{"ring", "halving_doubling"};

struct Tuning {
  std::size_t segment_bytes = 256 << 10;  // COLL_SEGMENT_BYTES: pipelining unit
  // COLL_NET_SEGMENT_BYTES (else COLL_SEGMENT_BYTES where that is set): the pipelining unit of a
  // collective whose ranks are on several nodes. A message between nodes costs a header, a match
  // and, over TCP, a pass through the receiver's staging; with 1 MiB, 64 MiB on 4 emulated nodes
  // took 67 / 56 ms out of place / in place against 73 / 72 with 256 KiB (docs/bandwidth.md).
  std::size_t net_segment_bytes = 1 << 20;
  // The pipelining unit of a collective over ranks of one node or of several.
  std::size_t segment_bytes_for(bool spans_nodes) const {
    return spans_nodes ? net_segment_bytes : segment_bytes;
  }
  // The segments (at least 1) a block of `bytes` is cut into, as the cost model counts them.
  double segments_in(double bytes, bool spans_nodes) const {
    const auto unit = static_cast<double>(std::max<std::size_t>(1, segment_bytes_for(spans_nodes)));
    return std::max(1.0, std::ceil(bytes / unit));
  }
  int window = 4;                   // COLL_WINDOW: receives kept in flight
  int ps_servers = 0;               // COLL_PS_SERVERS: parameter-server shards (0: every rank)
  bool ps_dedicated = false;        // COLL_PS_DEDICATED: servers are the last ranks, not spread
  std::string hier_intra = "ring";  // COLL_HIER_INTRA: hierarchical's intra-node algorithm
  // COLL_HIER_INTER: hierarchical's inter-node all-reduce; "auto": per call, the one of
  // kHierInterCandidates the cost model prices fastest.
  std::string hier_inter = "auto";
  // COLL_CHECK_ARGS: ranks compare their calls before each collective, a round of messages the
  // cost model adds to algorithms that do not carry the check in their own first message.
  bool check_arguments = true;
};

}  // namespace coll
