// The segmented, pipelined ring (see ring.cc), over caller-chosen blocks and a range of its
// 2(n-1) steps: steps [0, n-1) reduce-scatter, steps [n-1, 2(n-1)) all-gather. The steps run
// as one stream of (step, segment) units, so while segment j of step t is being reduced,
// segment j+1 is arriving and segment j of step t+1 is already on its way to the next rank.
#include "algorithms/ring_phases.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/pipeline.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

// Where block b's segments lie: the caller's bounds cut into pipeline segments.
class RingBlocks {
 public:
  RingBlocks(RingBounds bounds, const CollectiveContext& context, std::size_t elem_bytes, int steps)
      : bounds_(bounds),
        segmentation_(Segmentation::of(context, elem_bytes, longest(bounds),
                                       static_cast<std::size_t>(std::max(1, steps)))) {}

  const Segmentation& segmentation() const { return segmentation_; }
  // Segment `index` of block `block`, as elements from the start of the buffer.
  Piece segment(int block, std::size_t index) const {
    const auto b = static_cast<std::size_t>(block);
    Piece piece = segmentation_.piece(bounds_[b + 1] - bounds_[b], index);
    piece.offset += bounds_[b];
    return piece;
  }

 private:
  static std::size_t longest(RingBounds bounds) {
    std::size_t length = 0;
    for (std::size_t b = 0; b + 1 < bounds.size(); ++b) {
      length = std::max(length, bounds[b + 1] - bounds[b]);
    }
    return length;
  }

  RingBounds bounds_;
  Segmentation segmentation_;
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

  const RingSchedule ring(group.size(), group.me);
  const RingBlocks blocks(bounds, context, elem, ring.steps());
  const int right = group.global(group.index_after(1));
  const int left = group.global(group.index_after(-1));
  const std::size_t segments = blocks.segmentation().segments();
  const std::size_t units = std::size_t(last_step - first_step) * segments;
  const std::size_t window = window_of(context.tuning);
  const std::size_t slot_bytes = blocks.segmentation().elems() * elem;
  const bool reduces = ring.reduce_step(first_step);
  auto staging = context.pool.acquire(reduces ? window * slot_bytes : 0);
  const Transport::Request none{nullptr, -1, false, 0, true};
  std::vector<Transport::Request> receives(units, none);
  std::vector<Transport::Request> sends;
  sends.reserve(units);

  auto unit_step = [&](std::size_t unit) { return first_step + static_cast<int>(unit / segments); };
  auto post_send = [&](std::size_t unit) {
    const int step = unit_step(unit);
    const Piece range = blocks.segment(ring.send_block(step), unit % segments);
    if (range.length == 0) return;
    const std::byte* source = (step == 0 ? send : recv) + range.offset * elem;
    sends.push_back(context.transport.send(
        right, context.tags.make(group.global(group.me), static_cast<std::uint32_t>(unit)), source,
        range.length * elem));
  };
  auto post_recv = [&](std::size_t unit) {
    const int step = unit_step(unit);
    const Piece range = blocks.segment(ring.recv_block(step), unit % segments);
    if (range.length == 0) return;
    std::byte* target = ring.reduce_step(step) ? staging.data() + (unit % window) * slot_bytes
                                               : recv + range.offset * elem;
    receives[unit] =
        context.transport.recv(left, context.tags.make(left, static_cast<std::uint32_t>(unit)),
                               target, range.length * elem);
  };
  auto finish = [&](std::size_t unit) {
    context.transport.wait(receives[unit]);
    const int step = unit_step(unit);
    const Piece range = blocks.segment(ring.recv_block(step), unit % segments);
    if (ring.reduce_step(step) && range.length > 0) {
      std::byte* target = recv + range.offset * elem;
      // Each step reduces a block this rank has not touched yet: the partial sum that arrived
      // plus this rank's own input (still in `send`, which is `recv` when in place).
      context.reduce(args.type, args.op, target, send + range.offset * elem,
                     staging.data() + (unit % window) * slot_bytes, range.length);
      // The last reduce-scatter step completes this rank's block: average it once, here.
      if (args.op == ReduceOp::Avg && step == group.size() - 2) {
        finish_average(args.type, target, range.length, group.size());
      }
    }
    // The same segment's next step forwards what this one produced.
    if (unit + segments < units) post_send(unit + segments);
  };

  for (std::size_t unit = 0; unit < std::min(segments, units); ++unit) post_send(unit);
  run_windowed(units, window, post_recv, finish);
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
