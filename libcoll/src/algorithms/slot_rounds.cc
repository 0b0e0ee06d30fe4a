#include "algorithms/slot_rounds.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "coll/error.hpp"
#include "transport/waiter.hpp"

namespace coll {
namespace {

// Most publications arrive within a microsecond: polled inline, without the waiter's set-up.
constexpr int kInlinePolls = 64;
// A buffer is fetched ahead for the next round when this much or less of it was written, and
// then all of it: a part gains nothing where the other lines still have to come, and a larger
// vector's lines cost time where the peer is already polling the first (a default,
// docs/tuning.md, "Constants measured on the build VM").
constexpr std::size_t kPrefetchedBytes = offsetof(NodeSlots::Buffer, payload) + (1 << 10);

// Asks for the lines of [at, at + bytes) in exclusive state ahead of writing them (prefetchw;
// a no-op where the CPU lacks it).
void prefetch_for_write(const void* at, std::size_t bytes) {
#if defined(__x86_64__)
  const auto* line = static_cast<const std::byte*>(at);
  for (std::size_t offset = 0; offset < bytes; offset += 64) {
    asm volatile("prefetchw %0" : : "m"(line[offset]));
  }
#else
  static_cast<void>(at);
  static_cast<void>(bytes);
#endif
}

// A 64-bit digest of a call descriptor, compared every call in place of its bytes: each word is
// mixed in by an odd multiplier and a shift, so descriptors that differ in any field (count,
// type, sequence ...) get different digests but for a chance of 2^-64.
std::uint64_t digest_of(std::span<const std::byte> descriptor) {
  static_assert(NodeSlots::kDescriptorBytes % sizeof(std::uint64_t) == 0);
  std::uint64_t digest = NodeSlots::kDescriptorBytes;
  for (std::size_t at = 0; at < NodeSlots::kDescriptorBytes; at += sizeof(std::uint64_t)) {
    std::uint64_t word;
    std::memcpy(&word, descriptor.data() + at, sizeof word);
    digest = (digest ^ word) * 0x9e3779b97f4a7c15ULL;
    digest ^= digest >> 32;
  }
  return digest;
}

}  // namespace

bool slots_serve(const CollectiveContext& context) {
  NodeSlots* slots = context.node_slots();
  if (slots == nullptr || context.tags.stage() != 0 ||
      context.tags.context() >= NodeSlots::kContexts) {
    return false;
  }
  const Group& group = context.group;
  const int first = group.global(0);
  for (int member = 1; member < group.size(); ++member) {
    const int other = group.global(member);
    if (context.node_of_rank[first] != context.node_of_rank[other] ||
        !slots->connects(first, other)) {
      return false;
    }
  }
  return true;
}

SlotRounds::SlotRounds(const CollectiveContext& context)
    : context_(context),
      slots_(*context.node_slots()),
      group_(context.group),
      slot_context_(context.tags.context()) {}

NodeSlots::Buffer& SlotRounds::begin(std::size_t round) {
  if (round >= kMaxRounds) throw Error(Status::InternalError, "node slots: round out of range");
  round_ = (context_.tags.sequence() << kRoundBits) | (round + 1);
  turn_ = slots_.turn_buffers(slot_context_, slots_.turn(slot_context_));
  return buffer_of(group_.me);
}

void SlotRounds::publish_and_wait(std::size_t payload_bytes) {
  const bool first_round = (round_ & kMaxRounds) == 1;
  CallCheck* check = first_round ? context_.call_check : nullptr;
  NodeSlots::Buffer& mine = buffer_of(group_.me);
  if (check != nullptr) {
    const auto descriptor = check->descriptor();
    if (descriptor.size() != NodeSlots::kDescriptorBytes) {
      throw Error(Status::InternalError, "node slots: a call descriptor of " +
                                             std::to_string(descriptor.size()) + " bytes");
    }
    std::memcpy(mine.descriptor, descriptor.data(), NodeSlots::kDescriptorBytes);
    digest_ = digest_of(descriptor);
    mine.call_digest = digest_;
  }
  mine.round.store(round_, std::memory_order_release);
  first_missing_ = 0;
  if (!arrives_soon()) context_.transport.wait_for(*this);
  if (check != nullptr) compare_calls(*check);
  // Every peer has published this round, so none still reads the buffers of the round before:
  // this rank's next round may write them.
  slots_.next_turn(slot_context_);
  // The peers' reads took the lines this rank writes next to their caches: asking for them back
  // now, not at the next publication, keeps that transfer off the next round's path
  // (docs/tuning.md, "Constants measured on the build VM").
  const std::size_t written = offsetof(NodeSlots::Buffer, payload) + payload_bytes;
  if (written <= kPrefetchedBytes) {
    prefetch_for_write(
        &slots_.buffer(slot_context_, group_.global(group_.me), slots_.turn(slot_context_)),
        written);
  }
}

int SlotRounds::peer() const {
  return group_.global(std::min(first_missing_, group_.size() - 1));
}

void SlotRounds::check_slow() {
  if (context_.call_check != nullptr) context_.call_check->poll_message();
}

bool SlotRounds::arrives_soon() {
  for (int poll = 0; poll < kInlinePolls; ++poll) {
    if (missing() == 0) return true;
  }
  return false;
}

// When a descriptor differs from this rank's, each rank compares them in the same order, so all
// of them name the same first pair that differs.
void SlotRounds::compare_calls(CallCheck& check) {
  bool agree = true;
  for (int member = 0; member < group_.size() && agree; ++member) {
    agree = member == group_.me || buffer_of(member).call_digest == digest_;
  }
  const auto described = [&](int member) {
    return std::span<const std::byte>(buffer_of(member).descriptor, NodeSlots::kDescriptorBytes);
  };
  for (int second = 0; second < group_.size() && !agree; ++second) {  // throws at the first
    const int first = (second + group_.size() - 1) % group_.size();
    check.compare(group_.global(first), described(first), group_.global(second), described(second));
  }
  check.compared_all();
}

}  // namespace coll
