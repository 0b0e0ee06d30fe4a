#include "send_stamps.hpp"

#include <string>

#include "coll/error.hpp"
#include "spin_wait.hpp"

namespace coll {

std::size_t SendStamps::bytes(int ranks) {
  return sizeof(Slot) * kSlots * static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks);
}

SendStamps::SendStamps(void* memory, int ranks, int rank)
    : slots_(static_cast<Slot*>(memory)),
      ranks_(ranks),
      rank_(rank),
      sent_(static_cast<std::size_t>(ranks)),
      oldest_(static_cast<std::size_t>(ranks)),
      taken_(static_cast<std::size_t>(ranks)) {}

SendStamps::Slot* SendStamps::ring(int from, int to) {
  return slots_ + (static_cast<std::size_t>(from) * static_cast<std::size_t>(ranks_) +
                   static_cast<std::size_t>(to)) *
                      kSlots;
}

void SendStamps::put(int peer, Tag tag, SendStamp stamp, double timeout_s) {
  std::uint64_t& number = sent_[static_cast<std::size_t>(peer)];
  Slot& slot = ring(rank_, peer)[number % kSlots];
  spin_until([&slot] { return slot.sequence.load(std::memory_order_acquire) == 0; }, timeout_s,
             [&] {
               return "shaped transport: rank " + std::to_string(peer) + " has not received " +
                      std::to_string(kSlots) + " messages from rank " + std::to_string(rank_) +
                      " in " + std::to_string(timeout_s) + " s";
             });
  slot.tag = tag;
  slot.stamp = stamp;
  slot.sequence.store(++number, std::memory_order_release);
}

SendStamp SendStamps::take(int peer, Tag tag) {
  Slot* from_peer = ring(peer, rank_);
  std::uint64_t& oldest = oldest_[static_cast<std::size_t>(peer)];
  std::deque<bool>& taken = taken_[static_cast<std::size_t>(peer)];
  for (std::uint64_t i = 0; i < kSlots; ++i) {
    if (i < taken.size() && taken[i]) continue;
    Slot& slot = from_peer[(oldest + i) % kSlots];
    if (slot.sequence.load(std::memory_order_acquire) != oldest + i + 1) break;  // not sent yet
    if (slot.tag != tag) continue;
    const SendStamp stamp = slot.stamp;
    slot.sequence.store(0, std::memory_order_release);
    if (taken.size() <= i) taken.resize(i + 1);
    taken[i] = true;
    while (!taken.empty() && taken.front()) {  // the oldest ones taken: move past them
      taken.pop_front();
      ++oldest;
    }
    return stamp;
  }
  throw Error(Status::InternalError, "shaped transport: rank " + std::to_string(rank_) +
                                         " received a message from rank " + std::to_string(peer) +
                                         " that carries no send stamp");
}

}  // namespace coll
