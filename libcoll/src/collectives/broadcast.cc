// Broadcast as a pipelined chain: the root streams segments to the next member, which forwards
// each segment as soon as it has arrived, so that for large messages every link carries the
// data once at full speed and the chain's length only adds (n - 2) segment latencies.
#include <algorithm>
#include <vector>

#include "collectives/chain.hpp"
#include "collectives/collectives.hpp"

namespace coll {

void chain_broadcast(const CollectiveContext& context, void* data, std::size_t count, DataType type,
                     int root) {
  if (context.group.size() == 1 || count == 0) return;
  const Chain chain(context, root, count, type);
  const std::size_t elem = dtype_size(type);
  auto* bytes = static_cast<std::byte*>(data);
  const int position = chain.position();
  const bool forwards = position + 1 < chain.size();
  const int next = forwards ? chain.at(position + 1) : -1;
  const int previous = position > 0 ? chain.at(position - 1) : -1;
  const std::size_t segments = chain.segments();
  const auto segment_of = [&](std::size_t s) { return bytes + chain.offset(s) * elem; };

  std::vector<Transport::Request> sends;
  sends.reserve(forwards ? segments : 0);
  const auto forward = [&](std::size_t s) {
    sends.push_back(
        context.transport.send(next, context.tags.make(chain.me(), static_cast<std::uint32_t>(s)),
                               segment_of(s), chain.length(s) * elem));
  };
  if (position == 0) {
    for (std::size_t s = 0; s < segments; ++s) forward(s);
  } else {
    const std::size_t window = std::min<std::size_t>(std::max(1, context.tuning.window), segments);
    std::vector<Transport::Request> receives(segments);
    const auto post_recv = [&](std::size_t s) {
      receives[s] = context.transport.recv(
          previous, context.tags.make(previous, static_cast<std::uint32_t>(s)), segment_of(s),
          chain.length(s) * elem);
    };
    for (std::size_t s = 0; s < window; ++s) post_recv(s);
    for (std::size_t s = 0; s < segments; ++s) {
      context.transport.wait(receives[s]);
      if (forwards) forward(s);
      if (s + window < segments) post_recv(s + window);
    }
  }
  context.transport.wait_all(sends);
}

}  // namespace coll
