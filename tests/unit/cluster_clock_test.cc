// The emulated cluster's clock: the steady clock normally; while a virtual clock is in use, each
// thread's own time, which a task queued on the progress engine carries from its caller to the
// engine and back, and which emulated compute advances without sleeping.
#include <gtest/gtest.h>

#include <thread>

#include "coll/clock.hpp"
#include "coll/cluster_clock.hpp"
#include "core/progress_engine.hpp"

namespace {

namespace clock = coll::cluster_clock;

TEST(ClusterClock, IsTheSteadyClockUnlessAVirtualClockIsInUse) {
  ASSERT_FALSE(clock::is_virtual());
  const double before = coll::now_seconds();
  const double now = clock::now();
  EXPECT_GE(now, before);
  EXPECT_LE(now, coll::now_seconds());
  clock::advance_to(before + 1e6);  // no effect on the steady clock
  EXPECT_LT(clock::now(), before + 1e5);
}

TEST(ClusterClock, AQueuedTaskStartsAtItsCallersTimeAndHandsItsEndBack) {
  const clock::VirtualClockUser virtual_clock;
  ASSERT_TRUE(clock::is_virtual());
  std::thread caller([] {  // a thread of its own: its virtual time starts at 0
    EXPECT_EQ(clock::now(), 0);
    clock::sleep_until(5.0);  // emulated compute: no real sleep, the clock moves
    EXPECT_DOUBLE_EQ(clock::now(), 5.0);
    coll::ProgressEngine engine;
    double seen = -1;
    auto completion = engine.submit([&] {
      seen = clock::now();
      clock::advance_to(7.5);  // as a message arriving at 7.5 s would
    });
    completion->wait();
    EXPECT_DOUBLE_EQ(seen, 5.0);
    EXPECT_DOUBLE_EQ(clock::now(), 7.5);
    const auto [started, finished] = completion->times();
    EXPECT_DOUBLE_EQ(started, 5.0);
    EXPECT_DOUBLE_EQ(finished, 7.5);
    clock::advance_to(1.0);  // never back
    EXPECT_DOUBLE_EQ(clock::now(), 7.5);
  });
  caller.join();
}

}  // namespace
