// Ring all-reduce: reduce-scatter then all-gather around the group, each rank sending
// 2(n-1)/n of the data. Every chunk is cut into segments, and the ring runs as one stream of
// (step, segment) units, so that while segment j of step t is being reduced, segment j+1 is
// arriving and segment j of step t+1 is already on its way to the next rank.
#include <cstring>
#include <vector>

#include "algorithms/partition.hpp"
#include "algorithms/registry.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

struct Range {
  std::size_t offset;  // in elements, from the start of the buffer
  std::size_t length;
};

class RingSchedule {
 public:
  RingSchedule(std::size_t count, int ranks, int me, std::size_t segment_elems)
      : chunks_(count, static_cast<std::size_t>(ranks)), ranks_(ranks), me_(me) {
    const std::size_t longest = chunks_.max_length();
    segment_ = std::max<std::size_t>(1, segment_elems);
    segments_ = longest == 0 ? 0 : (longest + segment_ - 1) / segment_;
    // Keep the message index within the tag's 24 bits by growing segments if needed.
    const std::size_t limit = TagSpace::kMaxMessages / 2 / std::size_t(steps() > 0 ? steps() : 1);
    if (segments_ > limit) {
      segment_ = (longest + limit - 1) / limit;
      segments_ = (longest + segment_ - 1) / segment_;
    }
  }

  int steps() const { return 2 * (ranks_ - 1); }
  std::size_t segments() const { return segments_; }
  std::size_t units() const { return std::size_t(steps()) * segments_; }
  std::size_t segment_elems() const { return std::min(segment_, chunks_.max_length()); }
  bool reduce_step(int step) const { return step < ranks_ - 1; }

  // Chunk this rank sends / receives at a step: reduce-scatter walks backwards from this rank,
  // all-gather forwards the chunk this rank completed (me + 1) and the ones it receives.
  int send_chunk(int step) const {
    return reduce_step(step) ? wrap(me_ - step) : wrap(me_ + 1 - (step - (ranks_ - 1)));
  }
  int recv_chunk(int step) const {
    return reduce_step(step) ? wrap(me_ - step - 1) : wrap(me_ - (step - (ranks_ - 1)));
  }

  Range segment(int chunk, std::size_t index) const {
    const std::size_t length = chunks_.length(static_cast<std::size_t>(chunk));
    const std::size_t begin = std::min(length, index * segment_);
    const std::size_t end = std::min(length, begin + segment_);
    return {chunks_.offset(static_cast<std::size_t>(chunk)) + begin, end - begin};
  }

 private:
  int wrap(int index) const { return ((index % ranks_) + ranks_) % ranks_; }

  Partition chunks_;
  int ranks_;
  int me_;
  std::size_t segment_ = 1;
  std::size_t segments_ = 0;
};

}  // namespace

namespace {

void ring_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  const Group& group = context.group;
  const std::size_t elem = dtype_size(args.type);
  auto* recv = static_cast<std::byte*>(args.recv);
  const auto* send = static_cast<const std::byte*>(args.send);
  if (group.size() == 1 || args.count == 0) {
    if (send != recv && args.count > 0) std::memcpy(recv, send, args.count * elem);
    return;
  }

  const RingSchedule ring(args.count, group.size(), group.me, context.tuning.segment_bytes / elem);
  const int right = group.global(group.index_after(1));
  const int left = group.global(group.index_after(-1));
  const std::size_t units = ring.units();
  const std::size_t segments = ring.segments();
  const std::size_t window = std::max(1, context.tuning.window);
  const std::size_t slot_bytes = ring.segment_elems() * elem;
  auto staging = context.pool.acquire(window * slot_bytes);
  const Transport::Request none{nullptr, -1, false, 0, true};
  std::vector<Transport::Request> receives(units, none);
  std::vector<Transport::Request> sends;
  sends.reserve(units);

  auto unit_step = [&](std::size_t unit) { return static_cast<int>(unit / segments); };
  auto post_send = [&](std::size_t unit) {
    const int step = unit_step(unit);
    const Range range = ring.segment(ring.send_chunk(step), unit % segments);
    if (range.length == 0) return;
    const std::byte* source = (step == 0 ? send : recv) + range.offset * elem;
    sends.push_back(context.transport.send(
        right, context.tags.make(group.global(group.me), static_cast<std::uint32_t>(unit)), source,
        range.length * elem));
  };
  auto post_recv = [&](std::size_t unit) {
    const int step = unit_step(unit);
    const Range range = ring.segment(ring.recv_chunk(step), unit % segments);
    if (range.length == 0) return;
    std::byte* target = ring.reduce_step(step) ? staging.data() + (unit % window) * slot_bytes
                                               : recv + range.offset * elem;
    receives[unit] =
        context.transport.recv(left, context.tags.make(left, static_cast<std::uint32_t>(unit)),
                               target, range.length * elem);
  };

  for (std::size_t unit = 0; unit < segments; ++unit) post_send(unit);
  for (std::size_t unit = 0; unit < std::min(window, units); ++unit) post_recv(unit);
  for (std::size_t unit = 0; unit < units; ++unit) {
    context.transport.wait(receives[unit]);
    const int step = unit_step(unit);
    const Range range = ring.segment(ring.recv_chunk(step), unit % segments);
    if (ring.reduce_step(step) && range.length > 0) {
      std::byte* target = recv + range.offset * elem;
      // Each step reduces a chunk this rank has not touched yet: the partial sum that arrived
      // plus this rank's own input (still in `send`, which is `recv` when in place).
      reduce(args.type, args.op, target, send + range.offset * elem,
             staging.data() + (unit % window) * slot_bytes, range.length);
      // The last reduce-scatter step completes this rank's chunk: average it once, here.
      if (args.op == ReduceOp::Avg && step == group.size() - 2) {
        finish_average(args.type, target, range.length, group.size());
      }
    }
    if (unit + segments < units) post_send(unit + segments);
    if (unit + window < units) post_recv(unit + window);
  }
  context.transport.wait_all(sends);
}

const AlgorithmRegistration kRing({"ring", ring_allreduce,
                                   "reduce-scatter then all-gather around a ring; "
                                   "bandwidth-optimal, 2(n-1) latency steps",
                                   0});

}  // namespace
}  // namespace coll
