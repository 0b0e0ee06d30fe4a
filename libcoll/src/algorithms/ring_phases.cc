// The segmented, pipelined ring (see ring.cc), over caller-chosen blocks and a range of its
// 2(n-1) steps: steps [0, n-1) reduce-scatter, steps [n-1, 2(n-1)) all-gather. The steps run
// as one stream of (step, segment) units, so while segment j of step t is being reduced,
// segment j+1 is arriving and segment j of step t+1 is already on its way to the next rank.
#include "algorithms/ring_phases.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "reduce/reducer.hpp"

namespace coll {
namespace {

struct Range {
  std::size_t offset;  // in elements, from the start of the buffer
  std::size_t length;
};

class RingSchedule {
 public:
  RingSchedule(RingBounds bounds, int me, std::size_t segment_elems)
      : bounds_(bounds), ranks_(static_cast<int>(bounds.size()) - 1), me_(me) {
    std::size_t longest = 0;
    for (int b = 0; b < ranks_; ++b) longest = std::max(longest, block_length(b));
    longest_ = longest;
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
  std::size_t segment_elems() const { return std::min(segment_, longest_); }
  bool reduce_step(int step) const { return step < ranks_ - 1; }

  // Block this rank sends / receives at a step: reduce-scatter walks backwards from this rank,
  // all-gather forwards the block this rank completed (me + 1) and the ones it receives.
  int send_block(int step) const {
    return reduce_step(step) ? wrap(me_ - step) : wrap(me_ + 1 - (step - (ranks_ - 1)));
  }
  int recv_block(int step) const {
    return reduce_step(step) ? wrap(me_ - step - 1) : wrap(me_ - (step - (ranks_ - 1)));
  }

  Range segment(int block, std::size_t index) const {
    const std::size_t length = block_length(block);
    const std::size_t begin = std::min(length, index * segment_);
    const std::size_t end = std::min(length, begin + segment_);
    return {bounds_[static_cast<std::size_t>(block)] + begin, end - begin};
  }

 private:
  int wrap(int index) const { return ((index % ranks_) + ranks_) % ranks_; }
  std::size_t block_length(int block) const {
    const auto b = static_cast<std::size_t>(block);
    return bounds_[b + 1] - bounds_[b];
  }

  RingBounds bounds_;
  int ranks_;
  int me_;
  std::size_t longest_ = 0;
  std::size_t segment_ = 1;
  std::size_t segments_ = 0;
};

// Runs ring steps [first_step, last_step). Message indices count units from first_step, so
// the full ring's tags are those it always had; a phase run alone gets a stage of its own.
void run_steps(const CollectiveContext& context, const AllreduceArgs& args, RingBounds bounds,
               int first_step, int last_step) {
  const Group& group = context.group;
  const std::size_t elem = dtype_size(args.type);
  auto* recv = static_cast<std::byte*>(args.recv);
  const auto* send = static_cast<const std::byte*>(args.send);
  const std::size_t count = bounds.back();
  if (group.size() == 1 || count == 0) {
    if (send != recv && count > 0) std::memcpy(recv, send, count * elem);
    return;
  }

  const RingSchedule ring(bounds, group.me, context.tuning.segment_bytes / elem);
  const int right = group.global(group.index_after(1));
  const int left = group.global(group.index_after(-1));
  const std::size_t segments = ring.segments();
  const std::size_t units = std::size_t(last_step - first_step) * segments;
  const std::size_t window = std::max(1, context.tuning.window);
  const std::size_t slot_bytes = ring.segment_elems() * elem;
  const bool reduces = ring.reduce_step(first_step);
  auto staging = context.pool.acquire(reduces ? window * slot_bytes : 0);
  const Transport::Request none{nullptr, -1, false, 0, true};
  std::vector<Transport::Request> receives(units, none);
  std::vector<Transport::Request> sends;
  sends.reserve(units);

  auto unit_step = [&](std::size_t unit) { return first_step + static_cast<int>(unit / segments); };
  auto post_send = [&](std::size_t unit) {
    const int step = unit_step(unit);
    const Range range = ring.segment(ring.send_block(step), unit % segments);
    if (range.length == 0) return;
    const std::byte* source = (step == 0 ? send : recv) + range.offset * elem;
    sends.push_back(context.transport.send(
        right, context.tags.make(group.global(group.me), static_cast<std::uint32_t>(unit)), source,
        range.length * elem));
  };
  auto post_recv = [&](std::size_t unit) {
    const int step = unit_step(unit);
    const Range range = ring.segment(ring.recv_block(step), unit % segments);
    if (range.length == 0) return;
    std::byte* target = ring.reduce_step(step) ? staging.data() + (unit % window) * slot_bytes
                                               : recv + range.offset * elem;
    receives[unit] =
        context.transport.recv(left, context.tags.make(left, static_cast<std::uint32_t>(unit)),
                               target, range.length * elem);
  };

  for (std::size_t unit = 0; unit < std::min(segments, units); ++unit) post_send(unit);
  for (std::size_t unit = 0; unit < std::min(window, units); ++unit) post_recv(unit);
  for (std::size_t unit = 0; unit < units; ++unit) {
    context.transport.wait(receives[unit]);
    const int step = unit_step(unit);
    const Range range = ring.segment(ring.recv_block(step), unit % segments);
    if (ring.reduce_step(step) && range.length > 0) {
      std::byte* target = recv + range.offset * elem;
      // Each step reduces a block this rank has not touched yet: the partial sum that arrived
      // plus this rank's own input (still in `send`, which is `recv` when in place).
      reduce(args.type, args.op, target, send + range.offset * elem,
             staging.data() + (unit % window) * slot_bytes, range.length);
      // The last reduce-scatter step completes this rank's block: average it once, here.
      if (args.op == ReduceOp::Avg && step == group.size() - 2) {
        finish_average(args.type, target, range.length, group.size());
      }
    }
    if (unit + segments < units) post_send(unit + segments);
    if (unit + window < units) post_recv(unit + window);
  }
  context.transport.wait_all(sends);
}

}  // namespace

void ring_reduce_scatter(const CollectiveContext& context, const AllreduceArgs& args,
                         RingBounds bounds) {
  run_steps(context, args, bounds, 0, context.group.size() - 1);
}

void ring_all_gather(const CollectiveContext& context, void* data, DataType type,
                     RingBounds bounds) {
  const int n = context.group.size();
  if (n == 1) return;
  run_steps(context, {data, data, bounds.back(), type, ReduceOp::Sum}, bounds, n - 1, 2 * (n - 1));
}

void ring_reduce_scatter_all_gather(const CollectiveContext& context, const AllreduceArgs& args,
                                    RingBounds bounds) {
  run_steps(context, args, bounds, 0, 2 * (context.group.size() - 1));
}

}  // namespace coll
