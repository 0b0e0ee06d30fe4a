// A transport that makes every link behave like a slower one (COLL_TRANSPORT=shaped:<inner>,
// shape from COLL_SHAPE, see link_shape.hpp): a decorator over the real transport that holds
// each send until the emulated link has carried it. The sender reserves its message's transfer
// time on the token buckets of its path (intra-node: its out port, the receiver's in port and
// the node's staging path; inter-node: its node's NIC out and the peer node's NIC in) and posts it
// to the inner transport alpha after the last reservation ends. A rank reserves its sends one at
// a time, in order, each once the one before has been carried, so that concurrent senders'
// messages interleave on a shared port as flows share a link. Receives pass through. Needs no
// privileges; every rank must be on this machine (the node buckets are in shared memory).
#pragma once

#include <memory>
#include <vector>

#include "transport/link_shape.hpp"
#include "transport/token_bucket.hpp"
#include "transport/transport.hpp"

namespace coll {

class Bootstrap;

// The buckets one emulated node's ranks share.
struct alignas(64) NodeBuckets {
  TokenBucket staging, nic_out, nic_in;
};

// One rank's port inside its node, a direction each (a GPU's PCIe link): every intra-node message
// holds its sender's out port and its receiver's in port, so a rank that receives from several
// peers at once takes them in turn, as the cost model prices a rank's port.
struct alignas(64) PortBuckets {
  TokenBucket out, in;
};

// Every bucket of one shaped job, shared by all its ranks' transports: one NodeBuckets per node
// (numbered 0..), then one PortBuckets per rank, in zeroed memory of bytes(nodes, ranks).
struct JobBuckets {
  NodeBuckets* nodes = nullptr;
  PortBuckets* ports = nullptr;
  static JobBuckets at(void* memory, int nodes);
  static std::size_t bytes(int nodes, int ranks);
  // That memory in this process, for ranks that are threads (tests).
  static std::shared_ptr<void> in_process(int nodes, int ranks);
};

// `buckets`: the job's JobBuckets memory; `bootstrap` (may be null) carries the job's abort
// message.
std::unique_ptr<Transport> make_shaped_transport(std::unique_ptr<Transport> inner,
                                                 const LinkShape& shape, int rank,
                                                 const std::vector<int>& node_of_rank,
                                                 std::shared_ptr<void> buckets,
                                                 Bootstrap* bootstrap,
                                                 const TransportOptions& options);

}  // namespace coll
