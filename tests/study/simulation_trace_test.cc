// A simulated iteration as trace events: one per layer's backward, one per bucket's all-reduce.
#include "study/simulation_trace.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace coll::study {
namespace {

TEST(SimulationTrace, SimulatedIterationBecomesEvents) {
  const std::vector<Bucket> plan{{0, 2, 16}, {2, 3, 8}};
  const ComputeProfile profile{"test", {1.0, 0.0, 1.0}};
  const auto half_second = [](std::size_t) { return 0.5; };
  const SimResult result = simulate_wfbp(plan, profile, half_second);
  const auto events = simulation_events(result, plan, profile, 3);
  ASSERT_EQ(events.size(), 4u);  // 2 compute (tensor 1 takes 0 s) + 2 all-reduces
  EXPECT_EQ(events[0].lane, "compute");
  EXPECT_EQ(events[1].name, "backward 2");
  EXPECT_DOUBLE_EQ(events[1].start_s, 1.0);
  EXPECT_EQ(events[2].lane, "comm");
  EXPECT_EQ(events[2].name, "allreduce 0");
  EXPECT_DOUBLE_EQ(events[2].start_s, 1.0);
  EXPECT_DOUBLE_EQ(events[3].start_s, 2.0);
  EXPECT_DOUBLE_EQ(events[3].duration_s, 0.5);
  EXPECT_EQ(events[3].rank, 3);
  EXPECT_EQ(std::get<std::string>(events[3].args.at("tensors")), "2-2");
  EXPECT_DOUBLE_EQ(std::get<double>(events[3].args.at("bytes")), 8.0);
}

}  // namespace
}  // namespace coll::study
