#include "core/progress_engine.hpp"

namespace coll {

Completion::Completion(CostClock& clock) : clock_(clock), queued_s_(clock.now()) {}

void Completion::start() {
  clock_.advance_to(queued_s_);
  std::lock_guard lock(mutex_);
  started_s_ = clock_.now();
}

std::pair<double, double> Completion::times() {
  std::lock_guard lock(mutex_);
  return {started_s_, finished_s_};
}

void Completion::finish(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    finished_s_ = clock_.now();
    done_ = true;
    error_ = std::move(error);
  }
  finished_.notify_all();
}

bool Completion::test() {
  std::lock_guard lock(mutex_);
  if (done_ && error_) std::rethrow_exception(error_);
  if (done_) clock_.advance_to(finished_s_);
  return done_;
}

void Completion::wait() {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [this] { return done_; });
  if (error_) std::rethrow_exception(error_);
  clock_.advance_to(finished_s_);
}

ProgressEngine::ProgressEngine(CostClock& clock) : clock_(clock), thread_([this] { run(); }) {}

ProgressEngine::~ProgressEngine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  thread_.join();
}

std::shared_ptr<Completion> ProgressEngine::submit(std::function<void()> task) {
  auto completion = std::make_shared<Completion>(clock_);
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(std::move(task), completion);
  }
  work_.notify_one();
  return completion;
}

bool ProgressEngine::run_here_if_idle(const std::function<void()>& task) {
  {
    std::lock_guard lock(mutex_);
    if (running_ || running_here_ || !queue_.empty()) return false;
    running_here_ = true;
  }
  struct Done {  // lets the engine thread go on, even when the task throws
    ProgressEngine& engine;
    ~Done() {
      bool engine_has_work = false;
      {
        std::lock_guard lock(engine.mutex_);
        engine.running_here_ = false;
        engine_has_work = engine.stopping_ || !engine.queue_.empty();
      }
      // Only then: waking an idle engine thread for nothing took a context switch per call.
      if (engine_has_work) engine.work_.notify_one();
    }
  } done{*this};
  task();
  return true;
}

void ProgressEngine::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    work_.wait(lock, [this] { return !running_here_ && (stopping_ || !queue_.empty()); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    auto [task, completion] = std::move(queue_.front());
    queue_.pop_front();
    running_ = true;
    lock.unlock();
    std::exception_ptr error;
    try {
      completion->start();
      task();
    } catch (...) {
      error = std::current_exception();
    }
    // Idle before the waiter hears of it: its next short call then runs on its own thread.
    lock.lock();
    running_ = false;
    lock.unlock();
    completion->finish(error);
    lock.lock();
  }
}

}  // namespace coll
