// One rank of an in-process world, holding what a communicator hands an algorithm: its transport
// (a deadlock fails within `timeout_s` instead of hanging the test), the node's resources, a
// buffer pool and the whole world as one group; context() gives each collective its own tags.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/collective.hpp"
#include "coll/buffer_pool.hpp"
#include "transport/inproc_transport.hpp"

namespace coll::testing {

// One node, or several nodes from 2 ranks on, uneven where the ranks do not divide: 2 -> 1+1,
// 3 -> 2+1, 5 -> 3+2, 8 -> 3+3+2, 9 -> 3+3+3.
inline std::vector<int> node_map(int ranks, bool one_node) {
  if (one_node) return std::vector<int>(static_cast<std::size_t>(ranks), 0);
  const int nodes = ranks == 1 ? 1 : ranks <= 3 ? 2 : (ranks + 2) / 3;
  const int per_node = (ranks + nodes - 1) / nodes;
  std::vector<int> node_of_rank;
  for (int r = 0; r < ranks; ++r) node_of_rank.push_back(r / per_node);
  return node_of_rank;
}

struct InprocRank {
  InprocRank(InprocWorld& world, int rank, double timeout_s, const std::vector<int>& nodes)
      : transport(world.make_transport(rank, options_for(world, timeout_s))),
        node(world.node_resources(rank)),
        node_of_rank(nodes) {
    for (int r = 0; r < world.size(); ++r) group.ranks.push_back(r);
    group.me = rank;
  }

  // The next collective's context; `tuning` must outlive it.
  CollectiveContext context(const Tuning& tuning) {
    return {*transport, pool,    group,   node_of_rank, TagSpace(++sequence, 0),
            tuning,     nullptr, nullptr, &node};
  }

  std::unique_ptr<Transport> transport;
  NodeResources node;
  BufferPool pool;
  Group group;
  const std::vector<int>& node_of_rank;
  std::uint64_t sequence = 0;

 private:
  static TransportOptions options_for(const InprocWorld& world, double timeout_s) {
    TransportOptions options;
    options.timeout_s = timeout_s;
    options.ranks_on_this_host = world.size();
    return options;
  }
};

}  // namespace coll::testing
