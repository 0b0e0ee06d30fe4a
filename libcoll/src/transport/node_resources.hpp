// What the ranks of one node share besides messages: reads of each other's memory (PeerMemory),
// slots in shared memory through which they hand each other small vectors (NodeSlots), and
// memory they map into which a rank copies a plain buffer for them to load (staging). The
// communicator owns them; algorithms that use them get them with their CollectiveContext and
// fall back to messages where they are missing. They come with the transport that carries the
// node's links (transport_registry.hpp): between processes of one host, or between threads.
#pragma once

#include <memory>
#include <vector>

#include "coll/buffer_pool.hpp"
#include "transport/node_slots.hpp"
#include "transport/peer_memory.hpp"
#include "transport/transport.hpp"

namespace coll {

struct NodeResources {
  std::unique_ptr<PeerMemory> peer_memory;  // null: none
  std::unique_ptr<NodeSlots> node_slots;    // null: none
  // Memory the node's peers can map, into which peer_read stages a plain buffer (null: none).
  std::unique_ptr<BufferPool> staging;

  // Collective over `bootstrap`: for ranks that are processes, cross-memory attach between the
  // ranks of a node (COLL_PEER_MEMORY) and a shared segment per node (COLL_NODE_SLOTS).
  static NodeResources between_processes(Bootstrap& bootstrap, const std::vector<int>& node_of_rank,
                                         const TransportOptions& options);
};

}  // namespace coll
