// The clock on which the runtime's own work is timed: when a queued collective was queued,
// started and finished (the progress engine), and what a reduction costs. By default the steady
// clock, on which a reduction has already cost its real time. A library that emulates a cluster
// installs its own clock (per thread, moved on by messages, queued collectives and reductions)
// before it makes a communicator; the runtime calls it without knowing whose it is. One per
// process: reductions run in kernels that see no communicator.
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

// The installed clock, else the steady clock.
CostClock& cost_clock();
// `clock` (which must outlive the process's communicators), or nullptr for the steady clock.
void install_cost_clock(CostClock* clock);

}  // namespace coll
