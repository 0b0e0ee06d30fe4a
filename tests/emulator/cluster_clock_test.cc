// The emulated cluster's clock: the steady clock normally; while a virtual clock is in use, each
// thread's own time, which a task queued on the progress engine carries from its caller to the
// engine and back, and which emulated compute and emulated reductions advance without sleeping.
// The runtime's engine and reductions reach it through the CostClock the shaped links bring.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "algorithms/collective.hpp"
#include "cluster_cost_clock.hpp"
#include "coll/clock.hpp"
#include "core/progress_engine.hpp"
#include "emulator/cluster_clock.hpp"
#include "transport/inproc_transport.hpp"

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
  const clock::VirtualClockUser virtual_clock(0);
  ASSERT_TRUE(clock::is_virtual());
  std::thread caller([] {  // a thread of its own: its virtual time starts at 0
    EXPECT_EQ(clock::now(), 0);
    clock::sleep_until(5.0);  // emulated compute: no real sleep, the clock moves
    EXPECT_DOUBLE_EQ(clock::now(), 5.0);
    coll::ProgressEngine engine(coll::emulator::cluster_cost_clock());
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

// The emulated GPU's gamma, not this CPU's speed: a reduction of 1000 floats at 1 ms a byte moves
// the reducing thread's time on by exactly 4 s.
TEST(ClusterClock, AReductionTakesTheEmulatedHardwaresTime) {
  std::vector<float> sum(1000, 3.0f), addend(1000, 2.0f);
  const clock::VirtualClockUser virtual_clock(1e-3);
  // An algorithm's reductions go through its context, which carries the links' clock.
  const auto world = coll::InprocWorld::create(1);
  const auto transport = world->make_transport(0, coll::TransportOptions{});
  coll::BufferPool pool;
  const coll::Group group{{0}, 0};
  const std::vector<int> node_of_rank{0};
  const coll::Tuning tuning;
  coll::CollectiveContext context{*transport,           pool,  group, node_of_rank,
                                  coll::TagSpace(1, 0), tuning};
  context.clock = &coll::emulator::cluster_cost_clock();
  std::thread reducer([&] {
    clock::advance_to(1.0);
    context.reduce(coll::DataType::Float32, coll::ReduceOp::Sum, sum.data(), sum.data(),
                   addend.data(), sum.size());
    EXPECT_DOUBLE_EQ(clock::now(), 5.0);
    EXPECT_EQ(sum[999], 5.0f);
  });
  reducer.join();
}

}  // namespace
