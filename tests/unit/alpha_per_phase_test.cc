// How the cost model charges alpha to a rank's messages posted at once in one phase: one each
// (the default, as the shaped links emulate) or one for the phase (the paper study's
// sensitivity row, CostParams::alpha_once_per_phase). Only linear exchanges differ.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/registry.hpp"
#include "synthetic_params.hpp"

namespace coll::model {
namespace {

using coll::testing::flat;

constexpr std::size_t kSmall = 8;

CostParams once_per_phase(CostParams params) {
  params.charging.alpha_once_per_phase = true;
  return params;
}

TEST(AlphaPerPhase, APhasePaysEachMessageOrOnlyItsSlowestClass) {
  CostParams params = flat();
  params.intra.alpha_s = 2e-6;
  params.inter.alpha_s = 7e-6;
  EXPECT_DOUBLE_EQ(phase_alpha(params, 3, 4), 3 * 2e-6 + 4 * 7e-6);
  EXPECT_DOUBLE_EQ(phase_alpha(once_per_phase(params), 3, 4), 7e-6);
  EXPECT_DOUBLE_EQ(phase_alpha(once_per_phase(params), 3, 0), 2e-6);
  EXPECT_DOUBLE_EQ(phase_alpha(once_per_phase(params), 0, 0), 0);
}

TEST(AlphaPerPhase, LinearExchangesPayOneAlphaPerPhase) {
  const CostParams each = flat(), once = once_per_phase(flat());
  const Shape eight = Shape::uniform(1, 8);
  // One server: it takes 7 pushes in one phase and sends 7 pulls in the other.
  Tuning one_server;
  one_server.algorithm_options.set("COLL_PS_SERVERS", "1");
  EXPECT_DOUBLE_EQ(predict("ps", each, eight, kSmall, one_server)->latency_s, 2 * 7 * 1e-6);
  EXPECT_DOUBLE_EQ(predict("ps", once, eight, kSmall, one_server)->latency_s, 2 * 1e-6);
  // direct: each rank's 7 vectors in one step.
  EXPECT_DOUBLE_EQ(predict("direct", each, eight, kSmall)->latency_s, 7 * 1e-6);
  EXPECT_DOUBLE_EQ(predict("direct", once, eight, kSmall)->latency_s, 1e-6);
  // tree: two messages a pipeline step, one per tree, each way.
  const auto tree_each = predict("tree", each, eight, kSmall);
  const auto tree_once = predict("tree", once, eight, kSmall);
  EXPECT_DOUBLE_EQ(tree_once->latency_s, tree_each->latency_s / 2);
  // The leader's gather and scatter: 3 messages each at 4 ranks a node.
  const Shape two_by_four = Shape::uniform(2, 4);
  EXPECT_LT(predict("hierarchical_leader", once, two_by_four, kSmall)->latency_s,
            predict("hierarchical_leader", each, two_by_four, kSmall)->latency_s);
}

TEST(AlphaPerPhase, AlgorithmsWithOneMessageAPhaseAreUnchanged) {
  const CostParams each = flat(), once = once_per_phase(flat());
  for (const char* algorithm : {"ring", "halving_doubling", "recursive_doubling"}) {
    for (const std::size_t bytes : {kSmall, std::size_t{64} << 20}) {
      EXPECT_DOUBLE_EQ(predict(algorithm, once, Shape::uniform(2, 4), bytes)->total_s(),
                       predict(algorithm, each, Shape::uniform(2, 4), bytes)->total_s())
          << algorithm << " " << bytes;
    }
  }
}

}  // namespace
}  // namespace coll::model
