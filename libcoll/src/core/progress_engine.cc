#include "core/progress_engine.hpp"

#include "coll/cluster_clock.hpp"

namespace coll {

Completion::Completion() : queued_s_(cluster_clock::now()) {}

void Completion::start() {
  cluster_clock::advance_to(queued_s_);
  std::lock_guard lock(mutex_);
  started_s_ = cluster_clock::now();
}

std::pair<double, double> Completion::times() {
  std::lock_guard lock(mutex_);
  return {started_s_, finished_s_};
}

void Completion::finish(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    finished_s_ = cluster_clock::now();
    done_ = true;
    error_ = std::move(error);
  }
  finished_.notify_all();
}

bool Completion::test() {
  std::lock_guard lock(mutex_);
  if (done_ && error_) std::rethrow_exception(error_);
  if (done_) cluster_clock::advance_to(finished_s_);
  return done_;
}

void Completion::wait() {
  std::unique_lock lock(mutex_);
  finished_.wait(lock, [this] { return done_; });
  if (error_) std::rethrow_exception(error_);
  cluster_clock::advance_to(finished_s_);
}

ProgressEngine::ProgressEngine() : thread_([this] { run(); }) {}

ProgressEngine::~ProgressEngine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  thread_.join();
}

std::shared_ptr<Completion> ProgressEngine::submit(std::function<void()> task) {
  auto completion = std::make_shared<Completion>();
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(std::move(task), completion);
  }
  work_.notify_one();
  return completion;
}

void ProgressEngine::run() {
  while (true) {
    std::unique_lock lock(mutex_);
    work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    auto [task, completion] = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    try {
      completion->start();
      task();
      completion->finish(nullptr);
    } catch (...) {
      completion->finish(std::current_exception());
    }
  }
}

}  // namespace coll
