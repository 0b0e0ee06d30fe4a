// A transport that makes every link behave like a slower one (COLL_TRANSPORT=shaped:<inner>,
// shape from COLL_SHAPE, see link_shape.hpp): a decorator over the real transport that holds
// each send until the emulated link has carried it. The sender reserves its message's transfer
// time on the token buckets of its path (intra-node: the rank pair's link direction and the
// node's staging path; inter-node: its node's NIC out and the peer node's NIC in) and posts it
// to the inner transport alpha after the last reservation ends. Receives pass through. Needs no
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

// `nodes` holds one NodeBuckets per node of `node_of_rank` (nodes numbered 0..), shared by every
// rank's transport; `bootstrap` (may be null) carries the job's abort message.
std::unique_ptr<Transport> make_shaped_transport(std::unique_ptr<Transport> inner,
                                                 const LinkShape& shape, int rank,
                                                 const std::vector<int>& node_of_rank,
                                                 std::shared_ptr<NodeBuckets> nodes,
                                                 Bootstrap* bootstrap,
                                                 const TransportOptions& options);

}  // namespace coll
