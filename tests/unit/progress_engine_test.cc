// The progress engine runs tasks in the order they came, on its thread, or on the caller's when
// run_here_if_idle finds it idle (the torch backend's short collectives).
#include "core/progress_engine.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
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
