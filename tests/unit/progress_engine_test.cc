// The progress engine runs tasks in the order they came, on its thread, or on the caller's when
// run_here_if_idle finds it idle (the torch backend's short collectives).
#include "core/progress_engine.hpp"

#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

TEST(ProgressEngine, AnIdleEngineLetsTheCallerRunTheTask) {
  coll::ProgressEngine engine(coll::steady_cost_clock());
  std::thread::id ran_on;
  EXPECT_TRUE(engine.run_here_if_idle([&] { ran_on = std::this_thread::get_id(); }));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(ProgressEngine, ABusyEngineRunsNothingHere) {
  coll::ProgressEngine engine(coll::steady_cost_clock());
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  auto running = engine.submit([&] {
    started.set_value();
    released.wait();
  });
  started.get_future().wait();
  bool ran = false;
  EXPECT_FALSE(engine.run_here_if_idle([&] { ran = true; }));
  auto queued = engine.submit([] {});
  EXPECT_FALSE(engine.run_here_if_idle([&] { ran = true; }));  // one queued, one running
  release.set_value();
  running->wait();
  queued->wait();
  EXPECT_FALSE(ran);
}

// A task submitted while the caller runs one here starts only after it returned, as if queued
// behind it: collectives keep their order on every rank.
TEST(ProgressEngine, TasksSubmittedMeanwhileRunAfterTheCallersTask) {
  coll::ProgressEngine engine(coll::steady_cost_clock());
  std::vector<int> order;  // written by one thread at a time: the engine waits for the caller
  std::shared_ptr<coll::Completion> later;
  EXPECT_TRUE(engine.run_here_if_idle([&] {
    later = engine.submit([&] { order.push_back(2); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // give the engine its chance
    order.push_back(1);
  }));
  later->wait();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

// The context switches of this process's threads other than the caller (the engine's).
long other_threads_switches() {
  long switches = 0;
  const std::string own = std::to_string(::syscall(SYS_gettid));
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    if (task.path().filename() == own) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("voluntary_ctxt_switches:")) switches += std::stol(line.substr(24));
    }
  }
  return switches;
}

// A task run here leaves an idle engine thread asleep: waking it after every call took a context
// switch per call (about a microsecond of a short collective's time, more where cores are shared).
// The calls are spaced, as a program's are, so that a thread woken by one is asleep again by the
// next.
TEST(ProgressEngine, ATaskRunHereLeavesAnIdleEngineAsleep) {
  coll::ProgressEngine engine(coll::steady_cost_clock());
  engine.submit([] {})->wait();                               // the engine thread has started
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // and gone to sleep
  const long before = other_threads_switches();
  for (int call = 0; call < 200; ++call) {
    ASSERT_TRUE(engine.run_here_if_idle([] {}));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  EXPECT_LT(other_threads_switches() - before, 10);  // one a call before
}

// Once a queued task is waited for, the engine is idle: the caller's next short task runs on its
// own thread instead of a hand-off to the engine's and back.
TEST(ProgressEngine, AfterAQueuedTaskIsWaitedForTheNextRunsHere) {
  coll::ProgressEngine engine(coll::steady_cost_clock());
  int ran_here = 0;
  for (int call = 0; call < 200; ++call) {
    engine.submit([] {})->wait();
    ran_here += engine.run_here_if_idle([] {});
  }
  EXPECT_EQ(ran_here, 200);
}

TEST(ProgressEngine, ATaskThatThrowsHereLeavesTheEngineWorking) {
  coll::ProgressEngine engine(coll::steady_cost_clock());
  EXPECT_THROW(engine.run_here_if_idle([] { throw std::runtime_error("failed"); }),
               std::runtime_error);
  std::atomic<bool> ran{false};
  engine.submit([&] { ran = true; })->wait();
  EXPECT_TRUE(ran);
  EXPECT_TRUE(engine.run_here_if_idle([] {}));
}

}  // namespace
