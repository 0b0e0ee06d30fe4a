// Rounds through the node's shared-memory slots (Transport::node_slots), without a message: each
// rank writes into its own slot, publishes the round with one release store of its number, and
// waits until every rank of the group has published it. `shm` passes its vectors through them,
// `peer_read` only its three hand-offs. The argument check rides in the first round: every rank
// sees every descriptor's digest next to the round number, and where one differs reads the full
// descriptors, so all of them find a difference at once and name the same first pair.
#pragma once

#include <cstddef>
#include <cstdint>

#include "algorithms/collective.hpp"
#include "transport/node_slots.hpp"

namespace coll {

// Whether the ranks of the group can meet in the slots: one node, a transport with slots, the
// collective's own stage (not a sub-collective) and a context the slots serve. The same answer
// on every rank of the group.
bool slots_serve(const CollectiveContext& context);

class SlotRounds final : public WaitCondition {
 public:
  // A round's number is the collective's sequence above kRoundBits and the round within it
  // below, from 1 (0: unwritten); so at most kMaxRounds rounds per collective.
  static constexpr unsigned kRoundBits = 24;
  static constexpr std::size_t kMaxRounds = (std::size_t{1} << kRoundBits) - 1;

  // Where slots_serve(context).
  explicit SlotRounds(const CollectiveContext& context);

  // Starts round `round` (0, 1, ... below kMaxRounds) of this collective: this rank's buffer of
  // it, to fill before publish_and_wait.
  NodeSlots::Buffer& begin(std::size_t round);
  // Publishes this rank's buffer, `payload_bytes` of it written, and waits for every rank's; in
  // round 0, with the argument check on, compares every rank's call with this one's (throws,
  // naming the first pair that differs).
  void publish_and_wait(std::size_t payload_bytes);
  // Group member `member`'s buffer of the round last published: valid until the next round ends.
  const NodeSlots::Buffer& of(int member) const { return buffer_of(member); }

  // WaitCondition: the members whose slot does not hold this round yet. Inline (as buffer_of):
  // every poll calls it, and an out-of-line call would go through the library's PLT.
  std::size_t missing() override {
    while (first_missing_ < group_.size() &&
           (first_missing_ == group_.me ||
            buffer_of(first_missing_).round.load(std::memory_order_acquire) == round_)) {
      ++first_missing_;
    }
    return static_cast<std::size_t>(group_.size() - first_missing_);
  }
  int peer() const override;
  void check_slow() override;

 private:
  NodeSlots::Buffer& buffer_of(int member) const {
    return turn_[NodeSlots::stride() * std::size_t(slots_.local_index(group_.global(member)))];
  }
  bool arrives_soon();
  void compare_calls(CallCheck& check);

  const CollectiveContext& context_;
  NodeSlots& slots_;
  const Group& group_;
  const unsigned slot_context_;
  std::uint64_t round_ = 0;            // the number published: sequence and round, never 0
  std::uint64_t digest_ = 0;           // of this rank's call descriptor, when checked
  NodeSlots::Buffer* turn_ = nullptr;  // this round's buffers of this context
  int first_missing_ = 0;
};

}  // namespace coll
