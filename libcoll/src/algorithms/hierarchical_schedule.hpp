// Hierarchical's rail assignment as pure functions, testable without processes. The buffer is
// cut into S shards, S = the most ranks on one node. A node of L members groups the shards into
// L contiguous runs (blocks) of about S/L shards, one per member after the intra-node ring
// reduce-scatter; the members holding shard s on every node form shard s's rail.
#pragma once

#include <cstddef>

#include "algorithms/ring_schedule.hpp"

namespace coll {

// Block b of a node of `local_size` members holds shards [first_shard(b), first_shard(b + 1)).
inline std::size_t first_shard(std::size_t block, std::size_t shards, std::size_t local_size) {
  return block * shards / local_size;
}

// The block of a node of `local_size` members that holds shard `shard`.
inline std::size_t block_of_shard(std::size_t shard, std::size_t shards, std::size_t local_size) {
  std::size_t block = 0;
  while (first_shard(block + 1, shards, local_size) <= shard) ++block;
  return block;
}

// The member of a node of `local_size` members on shard `shard`'s rail: the ring
// reduce-scatter leaves block b complete with member b - 1 (ring_block_of).
inline std::size_t rail_member(std::size_t shard, std::size_t shards, std::size_t local_size) {
  return (block_of_shard(shard, shards, local_size) + local_size - 1) % local_size;
}

}  // namespace coll
