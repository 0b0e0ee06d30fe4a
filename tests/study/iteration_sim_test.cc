// The WFBP timeline by hand on tiny cases (hidden, queued, exposed) and the non-overlapped case.
#include <gtest/gtest.h>

#include "coll/error.hpp"
#include "study/iteration_sim.hpp"

namespace coll::study {
namespace {

AllreduceCost constant(double seconds) {
  return [=](std::size_t) { return seconds; };
}

const ComputeProfile kThreeSeconds{"test", {1.0, 1.0, 1.0}};

TEST(IterationSim, OverlapHidesAllButTheLastAllreduce) {
  // Ready at 1, 2, 3 s; 0.5 s each: [1, 1.5], [2, 2.5], [3, 3.5].
  const SimResult r =
      simulate_wfbp({{0, 1, 8}, {1, 2, 8}, {2, 3, 8}}, kThreeSeconds, constant(0.5));
  EXPECT_DOUBLE_EQ(r.backward_s, 3.0);
  EXPECT_DOUBLE_EQ(r.comm_s, 1.5);
  EXPECT_DOUBLE_EQ(r.iteration_s, 3.5);
  EXPECT_DOUBLE_EQ(r.exposed_s, 0.5);
  EXPECT_DOUBLE_EQ(r.hidden_fraction, 1.0 - 0.5 / 1.5);
  ASSERT_EQ(r.buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(r.buckets[1].ready_s, 2.0);
  EXPECT_DOUBLE_EQ(r.buckets[1].start_s, 2.0);
  EXPECT_DOUBLE_EQ(r.buckets[1].end_s, 2.5);
  EXPECT_EQ(r.buckets[1].bytes, 8u);
}

TEST(IterationSim, FullyHiddenWhenTheLastBucketIsEmpty) {
  const SimResult r =
      simulate_wfbp({{0, 1, 8}, {1, 2, 8}, {2, 3, 0}}, kThreeSeconds, constant(0.5));
  EXPECT_DOUBLE_EQ(r.iteration_s, 3.0);
  EXPECT_DOUBLE_EQ(r.exposed_s, 0.0);
  EXPECT_DOUBLE_EQ(r.comm_s, 1.0);
  EXPECT_DOUBLE_EQ(r.hidden_fraction, 1.0);
}

TEST(IterationSim, SlowAllreducesQueue) {
  // 2 s each: [1, 3], [3, 5], [5, 7].
  const SimResult r = simulate_wfbp({{0, 1, 8}, {1, 2, 8}, {2, 3, 8}}, kThreeSeconds, constant(2));
  EXPECT_DOUBLE_EQ(r.buckets[2].start_s, 5.0);
  EXPECT_DOUBLE_EQ(r.iteration_s, 7.0);
  EXPECT_DOUBLE_EQ(r.exposed_s, 4.0);
  EXPECT_DOUBLE_EQ(r.hidden_fraction, 1.0 - 4.0 / 6.0);
}

// Back to back, each all-reduce starts before the previous one ends by the smaller of their
// leads, and only its time after that end counts as communication.
TEST(IterationSim, BackToBackAllreducesOverlapByTheirCommonLead) {
  const AllreduceLead lead = [](std::size_t bytes) { return bytes == 8 ? 0.5 : 0.25; };
  // 2 s each, ready at 1, 2, 3 s: [1, 3], [2.5, 4.5] (lead 0.5), [4.25, 6.25] (min(0.5, 0.25)).
  const SimResult r =
      simulate_wfbp({{0, 1, 8}, {1, 2, 8}, {2, 3, 16}}, kThreeSeconds, constant(2), lead);
  EXPECT_DOUBLE_EQ(r.buckets[1].start_s, 2.5);
  EXPECT_DOUBLE_EQ(r.buckets[2].start_s, 4.25);
  EXPECT_DOUBLE_EQ(r.iteration_s, 6.25);
  EXPECT_DOUBLE_EQ(r.comm_s, 2 + 1.5 + 1.75);
  // Apart, they do not overlap: ready at 1, 2, 3 s, 0.5 s each.
  const SimResult apart =
      simulate_wfbp({{0, 1, 8}, {1, 2, 8}, {2, 3, 8}}, kThreeSeconds, constant(0.5), lead);
  EXPECT_DOUBLE_EQ(apart.buckets[1].start_s, 2.0);
  EXPECT_DOUBLE_EQ(apart.comm_s, 1.5);
}

TEST(IterationSim, FusedBucketWaitsForItsLastTensor) {
  const SimResult r = simulate_wfbp({{0, 2, 16}, {2, 3, 8}}, kThreeSeconds, constant(0.5));
  EXPECT_DOUBLE_EQ(r.buckets[0].ready_s, 2.0);
  EXPECT_DOUBLE_EQ(r.buckets[0].end_s, 2.5);
  EXPECT_DOUBLE_EQ(r.iteration_s, 3.5);
}

TEST(IterationSim, NoOverlapExposesEverything) {
  const SimResult r =
      simulate_no_overlap({{0, 1, 8}, {1, 2, 8}, {2, 3, 8}}, kThreeSeconds, constant(0.5));
  EXPECT_DOUBLE_EQ(r.buckets[0].start_s, 3.0);
  EXPECT_DOUBLE_EQ(r.iteration_s, 4.5);
  EXPECT_DOUBLE_EQ(r.exposed_s, 1.5);
  EXPECT_DOUBLE_EQ(r.hidden_fraction, 0.0);
}

TEST(IterationSim, EmptyModelAndBadPlans) {
  const SimResult r = simulate_wfbp({}, ComputeProfile{"none", {}}, constant(1));
  EXPECT_EQ(r.iteration_s, 0.0);
  EXPECT_EQ(r.hidden_fraction, 1.0);
  EXPECT_THROW(simulate_wfbp({{0, 2, 8}}, kThreeSeconds, constant(1)), Error);
  EXPECT_THROW(simulate_wfbp({{0, 2, 8}, {1, 3, 8}}, kThreeSeconds, constant(1)), Error);
  EXPECT_THROW(simulate_wfbp({{0, 3, 8}}, kThreeSeconds, constant(-1)), Error);
}

}  // namespace
}  // namespace coll::study
