// A transport that makes every link behave like a slower one (COLL_TRANSPORT=shaped:<inner>,
// shape from COLL_SHAPE, see link_shape.hpp): a decorator over the real transport that holds
// each send until the emulated link has carried it. The sender reserves its message's time on
// the token buckets of its path (alpha of its own and of the receiver's work; then the bytes on
// its out port, inside a node on the receiver's in port and the node's staging path, between
// nodes on its node's NIC out and the peer node's NIC in) and posts it to the inner transport
// when the last reservation ends. A rank reserves its sends one at a time, in order, each from
// alpha before the one before has arrived, so that concurrent senders' messages interleave on a
// shared port as flows share a link. Receives pass through. Needs no privileges; every rank must
// be on this machine (the node buckets are in shared memory).
// On the virtual clock (clock=virtual) nothing is held: each send reserves the sender's work and
// its own port and is posted at once, stamped with when it left; the receiver reserves its own
// work and the links the message shares with other ranks' when it takes the message, and its
// virtual time moves on to the emulated arrival (emulator/cluster_clock.hpp). Links keep
// calendars instead of buckets there, since ranks reach them out of emulated-time order.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "link_calendar.hpp"
#include "link_shape.hpp"
#include "token_bucket.hpp"
#include "transport/transport.hpp"
#include "transport/transport_registry.hpp"

namespace coll {

class Bootstrap;

// The links one emulated node's ranks share: its host staging path and its NIC, a direction each.
// `Link`: TokenBucket on the real clock, LinkCalendar on the virtual clock.
template <class Link>
struct alignas(64) NodeLinks {
  Link staging, nic_out, nic_in;
};

// One rank's port inside its node, a direction each (a GPU's PCIe link): every intra-node message
// holds its sender's out port and its receiver's in port, so a rank that receives from several
// peers at once takes them in turn, as the cost model prices a rank's port. `sending` and
// `taking` are the rank's own work on each message it sends or takes (alpha each, LogGP's
// overhead), which overlaps the bytes of the messages before it.
template <class Link>
struct alignas(64) PortLinks {
  Link out, in, sending, taking;
};

// Every link of one shaped job, shared by all its ranks' transports: one NodeLinks per node
// (numbered 0..), then one PortLinks per rank, in zeroed memory of bytes(nodes, ranks).
template <class Link>
struct JobLinks {
  NodeLinks<Link>* nodes = nullptr;
  PortLinks<Link>* ports = nullptr;
  static JobLinks at(void* memory, int nodes) {
    auto* first_node = static_cast<NodeLinks<Link>*>(memory);
    return {first_node, reinterpret_cast<PortLinks<Link>*>(first_node + nodes)};
  }
  static std::size_t bytes(int nodes, int ranks) {
    return sizeof(NodeLinks<Link>) * static_cast<std::size_t>(nodes) +
           sizeof(PortLinks<Link>) * static_cast<std::size_t>(ranks);
  }
};

// The memory every rank of one shaped job shares (its links, and on the virtual clock the
// messages' arrival stamps), zeroed: its size, and that memory in this process for ranks that
// are threads (tests).
std::size_t shaped_job_bytes(const LinkShape& shape, int nodes, int ranks);
std::shared_ptr<void> shaped_job_in_process(const LinkShape& shape, int nodes, int ranks);

// `job_memory`: the job's shared memory (shaped_job_bytes); `bootstrap` (may be null) carries
// the job's abort message.
std::unique_ptr<Transport> make_shaped_transport(std::unique_ptr<Transport> inner,
                                                 const LinkShape& shape, int rank,
                                                 const std::vector<int>& node_of_rank,
                                                 std::shared_ptr<void> job_memory,
                                                 Bootstrap* bootstrap,
                                                 const TransportOptions& options);

// The `shaped` wrapper (COLL_TRANSPORT=shaped:<inner>): `inner` over the links COLL_SHAPE
// describes, in memory every rank of the job maps. Collective, as TransportWrapper.
Connection wrap_in_shaped_transport(Connection inner, Bootstrap& bootstrap,
                                    const std::vector<int>& node_of_rank,
                                    const TransportOptions& options);

}  // namespace coll
