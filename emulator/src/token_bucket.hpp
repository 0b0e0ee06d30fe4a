// A token bucket of depth zero, kept as the time its link is next free: a message of d seconds
// of transfer starts when the link is free (or now) and holds it d seconds. Lock-free, so that
// buckets shared by the processes of one node (its staging path, its NIC) can live in shared
// memory.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace coll {

class TokenBucket {
 public:
  // Reserves the link for `duration_ns` from `now_ns` or when it frees, whichever is later;
  // returns the end of the reservation.
  std::int64_t reserve(std::int64_t now_ns, std::int64_t duration_ns) {
    std::int64_t free_at = free_at_ns_.load(std::memory_order_relaxed);
    while (true) {
      const std::int64_t end = std::max(free_at, now_ns) + duration_ns;
      if (free_at_ns_.compare_exchange_weak(free_at, end, std::memory_order_relaxed)) return end;
    }
  }

 private:
  static_assert(std::atomic<std::int64_t>::is_always_lock_free);
  std::atomic<std::int64_t> free_at_ns_{0};
};

}  // namespace coll
