// The emulated cluster's time, as the thread that asks sees it. Normally the steady clock
// (coll::now_seconds). Under a shaped transport on the virtual clock (COLL_SHAPE=...,clock=virtual,
// docs/emulation.md) every thread keeps a virtual time of its own instead: a message carries when
// it left and its receiver moves on to its emulated arrival, a queued collective carries its
// caller's time to the progress engine and back, and emulated compute advances the clock without
// sleeping. Emulated times then depend only on the shaped links and the real algorithms'
// messages, not on how this machine schedules its ranks. The runtime's progress engine and
// reductions reach it as their CostClock, once coll::emulator::enable() has installed it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace coll::cluster_clock {

// Seconds: this thread's virtual time on the virtual clock, else the steady clock.
double now();
// Waits until now() reaches `seconds`: on the virtual clock by advancing this thread's time.
void sleep_until(double seconds);
// On the virtual clock, moves this thread's time forward to `seconds` (never back); else nothing.
void advance_to(double seconds);
bool is_virtual();

// A reduction of `bytes` by this thread: on the virtual clock it advances this thread's time by
// the work the emulated hardware takes for it (COLL_SHAPE's reduce=, the preset's gamma, set by
// the VirtualClockUser); else nothing, the reduction having taken real time.
void charge_reduction(std::size_t bytes);

// The virtual clock in nanoseconds, for the shaped transport.
std::int64_t virtual_now_ns();
void advance_to_ns(std::int64_t ns);

// While one of these lives in the process, the cluster's clock is virtual (the shaped transport
// holds one for its lifetime), and every reduction costs `reduction_s_per_byte` of it per byte.
class VirtualClockUser {
 public:
  explicit VirtualClockUser(double reduction_s_per_byte);
  ~VirtualClockUser();
  VirtualClockUser(const VirtualClockUser&) = delete;
  VirtualClockUser& operator=(const VirtualClockUser&) = delete;
};

}  // namespace coll::cluster_clock
