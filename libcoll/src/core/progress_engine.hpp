// A communicator's progress engine: one thread that runs queued collectives in order while the
// caller computes, and sleeps on a condition variable when the queue is empty (no core burned).
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "core/cost_clock.hpp"

namespace coll {

// Completion of one queued task, shared by the engine and the caller's Request.
// Its times are its communicator's clock's (core/cost_clock.hpp): on a clock with a time per
// thread the task starts no earlier than its caller queued it, and the caller's time moves on to
// when it finished.
class Completion {
 public:
  explicit Completion(CostClock& clock);  // queued now, by the caller
  void start();                           // the engine began running the task (records the time)
  void finish(std::exception_ptr error);
  // When the task started and finished (the clock's seconds); 0 before.
  std::pair<double, double> times();
  bool test();  // true once finished; rethrows the task's error
  void wait();  // blocks until finished; rethrows the task's error

 private:
  CostClock& clock_;
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::exception_ptr error_;
  double queued_s_;
  double started_s_ = 0;
  double finished_s_ = 0;
};

class ProgressEngine {
 public:
  explicit ProgressEngine(CostClock& clock);  // the clock its tasks are timed on
  ~ProgressEngine();                          // runs what is queued, then joins the thread
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  std::shared_ptr<Completion> submit(std::function<void()> task);
  // Runs `task` on the calling thread if nothing is queued or running, and returns true; false,
  // with nothing run, otherwise. A short task so skips the hand-off to the engine thread and
  // back (two wake-ups, several microseconds); tasks submitted meanwhile wait until it returns.
  bool run_here_if_idle(const std::function<void()>& task);
  bool on_engine_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  void run();

  CostClock& clock_;
  std::mutex mutex_;
  std::condition_variable work_;
  std::deque<std::pair<std::function<void()>, std::shared_ptr<Completion>>> queue_;
  bool stopping_ = false;
  bool running_ = false;       // the engine thread runs a task
  bool running_here_ = false;  // a caller runs one (run_here_if_idle)
  std::thread thread_;
};

}  // namespace coll
