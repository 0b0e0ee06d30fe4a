// How each message left its sender on the virtual clock (the shaped transport's virtual mode):
// for every message it posts, the sender writes when its bytes went on the wire and when they
// left the sender's port into a ring per ordered pair of ranks, in shared memory; the receiver
// takes the oldest stamp of the received message's tag once its receive completes (messages of
// one tag from one peer arrive in the order sent) and reserves the links the message shares
// from it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "transport/transport.hpp"

namespace coll {

// When a message's bytes went on the wire (its sender's work on it done) and when they had left
// the sender's port.
struct SendStamp {
  std::int64_t on_wire_ns, sent_ns;
};

class SendStamps {
 public:
  static constexpr std::uint64_t kSlots = 4096;  // messages to one peer not yet received

  static std::size_t bytes(int ranks);
  // One rank's view of the job's rings in `memory` (zeroed, bytes(ranks) long).
  SendStamps(void* memory, int ranks, int rank);

  // Stamps this rank's next message to `peer`; waits (up to `timeout_s`) while the ring to that
  // peer is full, then throws naming it.
  void put(int peer, Tag tag, SendStamp stamp, double timeout_s);
  // The stamp of the message with `tag` just received from `peer`.
  SendStamp take(int peer, Tag tag);

 private:
  struct Slot {
    std::atomic<std::uint64_t> sequence;  // the message's number + 1; 0: free
    Tag tag;
    SendStamp stamp;
  };
  Slot* ring(int from, int to);

  Slot* slots_;
  int ranks_, rank_;
  std::vector<std::uint64_t> sent_;      // per peer: messages stamped so far
  std::vector<std::uint64_t> oldest_;    // per peer: the oldest message not yet taken
  std::vector<std::deque<bool>> taken_;  // per peer: taken or not, from oldest_ on
};

}  // namespace coll
