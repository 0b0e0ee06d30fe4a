// All-gather and reduce-scatter on the ring phases of ring_phases.cc, with one block per
// member in member order. The ring completes block member + 1 at each member, so they run on
// the group rotated by one: the member at rotated index i is member i + 1, whose block
// (i + 1) is then exactly the one it holds complete.
#include <cstring>
#include <vector>

#include "algorithms/ring_phases.hpp"
#include "collectives/collectives.hpp"

namespace coll {
namespace {

Group rotated_by_one(const Group& group) {
  const int n = group.size();
  Group rotated;
  for (int i = 0; i < n; ++i) rotated.ranks.push_back(group.global((i + 1) % n));
  rotated.me = (group.me - 1 + n) % n;
  return rotated;
}

std::vector<std::size_t> equal_blocks(int members, std::size_t count) {
  std::vector<std::size_t> bounds;
  for (int b = 0; b <= members; ++b) bounds.push_back(static_cast<std::size_t>(b) * count);
  return bounds;
}

}  // namespace

void ring_allgather(const CollectiveContext& context, const void* send, void* recv,
                    std::size_t count, DataType type) {
  const std::size_t block_bytes = count * dtype_size(type);
  auto* mine =
      static_cast<std::byte*>(recv) + static_cast<std::size_t>(context.group.me) * block_bytes;
  if (send != mine && count > 0) std::memcpy(mine, send, block_bytes);
  const Group rotated = rotated_by_one(context.group);
  const CollectiveContext on_rotated = context.over(rotated);
  ring_all_gather(on_rotated, recv, type, equal_blocks(rotated.size(), count));
}

void ring_reduce_scatter_to(const CollectiveContext& context, const void* send, void* recv,
                            std::size_t count, DataType type, ReduceOp op) {
  const int members = context.group.size();
  const std::size_t block_bytes = count * dtype_size(type);
  // The ring leaves partial results in every other block: they go to scratch, not to the
  // caller's buffers (recv holds one block; in place, it lies inside send).
  BufferPool::Lease scratch = context.pool.acquire(static_cast<std::size_t>(members) * block_bytes);
  const Group rotated = rotated_by_one(context.group);
  const CollectiveContext on_rotated = context.over(rotated);
  ring_reduce_scatter(on_rotated, {send, scratch.data(), members * count, type, op},
                      equal_blocks(members, count));
  if (count > 0) {
    std::memcpy(recv, scratch.data() + static_cast<std::size_t>(context.group.me) * block_bytes,
                block_bytes);
  }
}

}  // namespace coll
