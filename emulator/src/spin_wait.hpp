// Waiting, by yielding the core, for another process to let go of something in shared memory it
// holds only for moments (a link's calendar, a send stamp's slot): the clock is read only once the
// first try has failed, and a wait past `timeout_s` (the holder died or stopped) throws
// coll::Error (Timeout) with why().
#pragma once

#include <thread>

#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {

template <class Ready, class Why>
void spin_until(Ready&& ready, double timeout_s, Why&& why) {
  if (ready()) return;
  const Deadline deadline(timeout_s);
  while (!ready()) {
    if (deadline.expired()) throw Error(Status::Timeout, why());
    std::this_thread::yield();
  }
}

}  // namespace coll
