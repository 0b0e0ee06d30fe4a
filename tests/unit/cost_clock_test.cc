// A communicator's clock comes with its links (Connection::clock): the communicator times its
// queued collectives on it and charges its algorithms' reductions to it. Another communicator of
// the same process, over other links, keeps the steady clock: the clock is the communicator's,
// not the process's.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/store_server.hpp"
#include "coll/clock.hpp"
#include "coll/comm.hpp"
#include "core/cost_clock.hpp"
#include "transport/transport_registry.hpp"

namespace {

// The steady clock's time, counting what the runtime asks of it.
class CountingClock final : public coll::CostClock {
 public:
  double now() override {
    ++reads;
    return coll::now_seconds();
  }
  void advance_to(double) override {}
  void charge_reduction(std::size_t bytes) override { reduced_bytes += bytes; }

  std::atomic<long> reads{0};
  std::atomic<std::size_t> reduced_bytes{0};
};

CountingClock counting;

coll::Connection with_the_counting_clock(coll::Connection inner, coll::Bootstrap&,
                                         const std::vector<int>&, const coll::TransportOptions&) {
  inner.clock = &counting;
  return inner;
}

// Two ranks as threads over COLL_TRANSPORT=`transport`, each running one blocking and one queued
// all-reduce of `count` floats with the ring; returns the ranks' errors, empty when none.
std::string run_two_ranks(const char* transport, std::size_t count) {
  ::setenv("COLL_TRANSPORT", transport, 1);
  coll::StoreServer store("127.0.0.1", 0, coll::make_job_token());
  std::vector<std::string> errors(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        auto comm = coll::Comm::from_store(store.address(), store.token(), rank, 2);
        std::vector<float> data(count, 1.0f);
        comm->allreduce(data.data(), data.data(), count, coll::DataType::Float32,
                        coll::ReduceOp::Sum, "ring");
        comm->allreduce_async(data.data(), data.data(), count, coll::DataType::Float32,
                              coll::ReduceOp::Sum, "ring", 1)
            .wait();
        if (data[count - 1] != 4.0f) errors[rank] = "wrong result";
      } catch (const std::exception& error) {
        errors[rank] = error.what();
      }
    });
  }
  for (auto& rank : ranks) rank.join();
  ::unsetenv("COLL_TRANSPORT");
  return errors[0] + errors[1];
}

TEST(CostClock, ACommunicatorChargesTheClockItsLinksBring) {
  coll::register_transport_wrapper("counting", with_the_counting_clock);
  const std::size_t count = 1000;
  ASSERT_EQ(run_two_ranks("counting:inproc", count), "");
  // The ring's reduce-scatter: each of 2 ranks reduces half the floats, in each of 2 calls; and
  // each rank's communicator, once made, a one-byte all-reduce (its barrier).
  EXPECT_EQ(counting.reduced_bytes.load(), 2 * 2 * (count / 2) * sizeof(float) + 2);
  EXPECT_GT(counting.reads.load(), 0);  // the queued call was timed on it
}

TEST(CostClock, ACommunicatorOverOtherLinksKeepsTheSteadyClock) {
  coll::register_transport_wrapper("counting", with_the_counting_clock);
  const std::size_t reduced = counting.reduced_bytes.load();
  const long reads = counting.reads.load();
  ASSERT_EQ(run_two_ranks("inproc", 1000), "");
  EXPECT_EQ(counting.reduced_bytes.load(), reduced);
  EXPECT_EQ(counting.reads.load(), reads);
}

}  // namespace
