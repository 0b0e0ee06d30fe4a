// Hierarchical's inter-node level under COLL_HIER_INTER=auto (the default): the run takes the
// composition its cost formula priced fastest, from the communicator's cost model, and without
// one runs the ring. Seen through the messages a rank sends across 4 nodes of one rank each:
// a ring all-reduce takes 2 (n-1) = 6 steps, halving-doubling 2 log2(n) = 4.
#include <gtest/gtest.h>

#include "coll/selector.hpp"
#include "measured_run.hpp"

namespace {

using coll::Tuning;
using coll::model::CostParams;
using coll::testing::run_on_threads;

const std::vector<int> kFourNodes{0, 1, 2, 3};
constexpr std::size_t kCount = 1000;  // 4 KB: latency-bound across nodes

// Slow latency across nodes: the fewer steps win at small sizes.
CostParams latency_bound() {
  CostParams params;
  params.intra = {1e-6, 1e-10};
  params.inter = {50e-6, 1e-9};
  params.gamma_s_per_byte = 1e-10;
  return params;
}

Tuning inter_level(const char* name) {
  Tuning tuning;
  tuning.algorithm_options.set("COLL_HIER_INTER", name);
  return tuning;
}

TEST(HierarchicalLevels, AutoRunsTheCompositionItsFormulaChose) {
  const coll::Selector cost_model(latency_bound(), kFourNodes, Tuning{});
  const auto predicted = cost_model.predict("hierarchical", kCount * sizeof(float));
  ASSERT_TRUE(predicted);
  EXPECT_NE(predicted->detail.find("halving_doubling across 4 nodes"), std::string::npos)
      << predicted->detail;

  const auto automatic = run_on_threads("hierarchical", kFourNodes, kCount, Tuning{}, &cost_model);
  EXPECT_EQ(automatic.wrong, 0u);
  EXPECT_EQ(automatic.messages, 4u * 4);
  const auto halving =
      run_on_threads("hierarchical", kFourNodes, kCount, inter_level("halving_doubling"));
  EXPECT_EQ(halving.wrong, 0u);
  EXPECT_EQ(halving.messages, automatic.messages);
}

TEST(HierarchicalLevels, WithoutParametersAutoRunsTheRing) {
  const auto automatic = run_on_threads("hierarchical_leader", kFourNodes, kCount);
  const auto ring = run_on_threads("hierarchical_leader", kFourNodes, kCount, inter_level("ring"));
  EXPECT_EQ(automatic.wrong, 0u);
  EXPECT_EQ(ring.wrong, 0u);
  EXPECT_EQ(automatic.messages, 4u * 6);
  EXPECT_EQ(ring.messages, automatic.messages);
}

}  // namespace
