// The clock on which a communicator's own work is timed: when a queued collective was queued,
// started and finished (the progress engine), and what a reduction costs. The steady clock by
// default, on which a reduction has already cost its real time. A transport that emulates a
// cluster's links brings its own clock with them (Connection::clock: per thread, moved on by
// messages, queued collectives and reductions); the communicator hands it to its progress engine
// and to its algorithms' reductions (CollectiveContext::reduce), without knowing whose it is.
#pragma once

#include <cstddef>

namespace coll {

class CostClock {
 public:
  virtual ~CostClock() = default;
  // Seconds, as the calling thread sees them.
  virtual double now() = 0;
  // Moves the calling thread's time forward to `seconds` (never back), where time is its own.
  virtual void advance_to(double seconds) = 0;
  // A reduction of `bytes` by the calling thread has been done.
  virtual void charge_reduction(std::size_t bytes) = 0;
};

// std::chrono::steady_clock's seconds; nothing to advance or charge.
CostClock& steady_cost_clock();

}  // namespace coll
