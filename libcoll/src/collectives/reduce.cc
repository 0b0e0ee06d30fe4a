// Reduce as a pipelined chain towards the root: the last member sends its input, every member
// on the way adds its own input to each segment as it arrives and passes it on, and the root
// adds its input last. The order of the reduction is fixed by the chain, not by timing.
#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/chain.hpp"
#include "collectives/collectives.hpp"
#include "reduce/reducer.hpp"

namespace coll {

void chain_reduce(const CollectiveContext& context, const void* send, void* recv, std::size_t count,
                  DataType type, ReduceOp op, int root) {
  const std::size_t elem = dtype_size(type);
  const int members = context.group.size();
  const bool is_root = context.group.me == root;
  if (count == 0) return;
  if (members == 1) {
    if (send != recv) std::memcpy(recv, send, count * elem);  // the average of one is itself
    return;
  }
  const Chain chain(context, root, count, type);
  const int position = chain.position();
  const bool last = position + 1 == chain.size();
  const int upstream = last ? -1 : chain.at(position + 1);
  const int downstream = position > 0 ? chain.at(position - 1) : -1;
  const std::size_t segments = chain.segments();
  const auto* input = static_cast<const std::byte*>(send);

  // The partial results: the root's recv, or (in the middle of the chain) a scratch buffer
  // that stays valid until every send of it has completed.
  BufferPool::Lease scratch = context.pool.acquire(!is_root && !last ? count * elem : 0);
  std::byte* partial = is_root ? static_cast<std::byte*>(recv) : scratch.data();
  std::vector<Transport::Request> sends;
  sends.reserve(is_root ? 0 : segments);
  const auto pass_on = [&](const std::byte* source, std::size_t s) {
    sends.push_back(context.transport.send(
        downstream, context.tags.make(chain.me(), static_cast<std::uint32_t>(s)),
        source + chain.offset(s) * elem, chain.length(s) * elem));
  };

  if (last) {
    for (std::size_t s = 0; s < segments; ++s) pass_on(input, s);
  } else {
    const std::size_t window = std::min<std::size_t>(std::max(1, context.tuning.window), segments);
    const std::size_t slot_bytes = chain.segment_elems() * elem;
    BufferPool::Lease staging = context.pool.acquire(window * slot_bytes);
    std::vector<Transport::Request> receives(segments);
    const auto post_recv = [&](std::size_t s) {
      receives[s] = context.transport.recv(
          upstream, context.tags.make(upstream, static_cast<std::uint32_t>(s)),
          staging.data() + (s % window) * slot_bytes, chain.length(s) * elem);
    };
    for (std::size_t s = 0; s < window; ++s) post_recv(s);
    for (std::size_t s = 0; s < segments; ++s) {
      context.transport.wait(receives[s]);
      const std::size_t at = chain.offset(s) * elem;
      context.reduce(type, op, partial + at, input + at, staging.data() + (s % window) * slot_bytes,
                     chain.length(s));
      if (is_root && op == ReduceOp::Avg) {
        finish_average(type, partial + at, chain.length(s), members);
      }
      if (!is_root) pass_on(partial, s);
      if (s + window < segments) post_recv(s + window);
    }
  }
  context.transport.wait_all(sends);
}

}  // namespace coll
