// A link's busy times on the virtual clock, for the shaped transport's virtual mode: ranks reach
// a shared link (a node's NIC, its staging path, a rank's port) in whatever order this machine
// runs them, not in emulated-time order, so a message is carried in the free time at or after its
// start, wherever earlier reservations left gaps, not after the latest one (TokenBucket's rule,
// right only when reservations come in time order). A message may fill several gaps, as a real
// link interleaves the packets of concurrent flows: no free time shorter than a whole message is
// wasted. Lives in zeroed shared memory, guarded by a spin lock the processes share; keeps the
// latest kIntervals busy stretches, touching ones merged.
#pragma once

#include <atomic>
#include <cstdint>

namespace coll {

class LinkCalendar {
 public:
  static constexpr int kIntervals = 1024;
  static constexpr double kLockTimeoutS = 10;

  // Reserves `duration_ns` of the link's free time from `start_ns` on, in as many gaps as it
  // takes; returns when the last of it ends. Throws coll::Error (Timeout) when another process
  // holds the calendar for kLockTimeoutS.
  std::int64_t reserve(std::int64_t start_ns, std::int64_t duration_ns);

 private:
  struct Busy {
    std::int64_t begin, end;
  };
  void insert(int at, Busy busy);

  static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
  std::atomic<std::uint32_t> lock_{0};
  int count_ = 0;
  Busy busy_[kIntervals];  // sorted, disjoint, not touching
};

}  // namespace coll
