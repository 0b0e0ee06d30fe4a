#include "transport/node_resources.hpp"

#include "transport/cross_memory.hpp"

namespace coll {

NodeResources NodeResources::between_processes(Bootstrap& bootstrap,
                                               const std::vector<int>& node_of_rank,
                                               const TransportOptions& options) {
  NodeResources node;
  node.peer_memory = CrossMemory::connect(bootstrap, node_of_rank);
  node.node_slots = NodeSlots::connect(bootstrap, node_of_rank, options.ranks_outnumber_cores());
  if (node.peer_memory) node.staging = std::make_unique<BufferPool>(Sharing::WithPeers);
  return node;
}

}  // namespace coll
