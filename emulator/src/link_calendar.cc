#include "link_calendar.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "spin_wait.hpp"

namespace coll {

std::int64_t LinkCalendar::reserve(std::int64_t start_ns, std::int64_t duration_ns) {
  // Held for a few microseconds at most: one still held after seconds was left by a rank that
  // died or stopped inside it, and waiting longer would hang every rank that shares the link.
  spin_until([this] { return lock_.exchange(1, std::memory_order_acquire) == 0; }, kLockTimeoutS,
             [] {
               return "shaped transport: a link's calendar stayed locked for " +
                      std::to_string(int(kLockTimeoutS)) + " s (a rank died or stopped in it)";
             });
  std::int64_t cursor = start_ns, remaining = duration_ns;
  while (remaining > 0) {
    // The first stretch that ends after the cursor: wait for its end if it has begun, else
    // carry what fits into the gap before it.
    const int at = static_cast<int>(
        std::upper_bound(busy_, busy_ + count_, cursor,
                         [](std::int64_t t, const Busy& busy) { return t < busy.end; }) -
        busy_);
    if (at < count_ && busy_[at].begin <= cursor) {
      cursor = busy_[at].end;
      continue;
    }
    const std::int64_t gap = at < count_ ? busy_[at].begin - cursor : remaining;
    const std::int64_t carried = std::min(gap, remaining);
    insert(at, {cursor, cursor + carried});
    cursor += carried;
    remaining -= carried;
  }
  lock_.store(0, std::memory_order_release);
  return cursor;
}

// Inserts `busy` before index `at`, merged with the stretches it touches.
void LinkCalendar::insert(int at, Busy busy) {
  const bool joins_previous = at > 0 && busy_[at - 1].end == busy.begin;
  const bool joins_next = at < count_ && busy_[at].begin == busy.end;
  if (joins_previous && joins_next) {
    busy_[at - 1].end = busy_[at].end;
    std::memmove(busy_ + at, busy_ + at + 1,
                 sizeof(Busy) * static_cast<std::size_t>(count_ - at - 1));
    --count_;
  } else if (joins_previous) {
    busy_[at - 1].end = busy.end;
  } else if (joins_next) {
    busy_[at].begin = busy.begin;
  } else {
    if (count_ == kIntervals) {  // the oldest stretch goes: emulated time has long passed it
      if (at == 0) return;       // older than every stretch kept
      std::memmove(busy_, busy_ + 1, sizeof(Busy) * static_cast<std::size_t>(count_ - 1));
      --count_;
      --at;
    }
    std::memmove(busy_ + at + 1, busy_ + at, sizeof(Busy) * static_cast<std::size_t>(count_ - at));
    busy_[at] = busy;
    ++count_;
  }
}

}  // namespace coll
