// The alpha-beta-gamma cost model: every algorithm's formula (registered with it) on synthetic
// parameters, the selector's choices, presets against the paper's measured fits, and the
// calibration file. peer_read's and the parameter server's formulas have files of their own.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "algorithms/registry.hpp"
#include "coll/config.hpp"
#include "coll/error.hpp"
#include "coll/model/calibration.hpp"
#include "coll/model/preset.hpp"
#include "coll/model/resolve_params.hpp"
#include "coll/selector.hpp"
#include "model/link_model.hpp"
#include "synthetic_params.hpp"

namespace coll::model {
namespace {

constexpr std::size_t kSmall = 8;
constexpr std::size_t kLarge = 64u << 20;

using coll::testing::flat;
using coll::testing::staged_node_params;

double total(std::string_view algorithm, const CostParams& params, const Shape& shape,
             std::size_t bytes) {
  return predict(algorithm, params, shape, bytes)->total_s();
}

const std::vector<std::string> kFlatCandidates{"ring", "tree", "halving_doubling"};

TEST(CostModel, ShapeFromNodeMapAllowsUnevenNodes) {
  const Shape shape = Shape::from_node_of_rank({7, 7, 7, 3, 3});
  EXPECT_EQ(shape.ranks, 5);
  EXPECT_EQ(shape.nodes, 2);
  EXPECT_EQ(shape.local_sizes, (std::vector<int>{3, 2}));
  EXPECT_EQ(shape.node_of_rank, (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(shape.describe(), "5 ranks on 2 nodes (3+2)");
  EXPECT_THROW(Shape::from_node_of_rank({}), Error);
}

TEST(CostModel, RingFollowsItsFormula) {
  const CostParams params = flat();
  const int p = 8;
  const auto ring = predict("ring", params, Shape::uniform(1, p), kLarge);
  ASSERT_TRUE(ring);
  const double m = double(kLarge);
  EXPECT_DOUBLE_EQ(ring->latency_s, 2 * (p - 1) * 1e-6);
  EXPECT_DOUBLE_EQ(ring->bandwidth_s, 2.0 * (p - 1) / p * m * 1e-10);
  EXPECT_DOUBLE_EQ(ring->reduction_s, (p - 1.0) / p * m * 5e-11);
  // Bandwidth and reduction terms are linear in M, latency does not depend on it.
  const auto half = predict("ring", params, Shape::uniform(1, p), kLarge / 2);
  EXPECT_DOUBLE_EQ(half->bandwidth_s * 2, ring->bandwidth_s);
  EXPECT_DOUBLE_EQ(half->reduction_s * 2, ring->reduction_s);
  EXPECT_DOUBLE_EQ(half->latency_s, ring->latency_s);
}

TEST(CostModel, FlatRingAcrossNodesIsBoundByTheInterLink) {
  CostParams params = flat();
  params.inter = {5e-6, 4e-10};
  const auto ring = predict("ring", params, Shape::uniform(2, 4), kLarge);
  EXPECT_DOUBLE_EQ(ring->latency_s, 2 * 7 * 5e-6);
  EXPECT_DOUBLE_EQ(ring->bandwidth_s, 2.0 * 7 / 8 * double(kLarge) * 4e-10);
}

TEST(CostModel, HalvingDoublingPowerOfTwoAndExtraSteps) {
  const CostParams params = flat();
  const double m = double(kLarge);
  const auto pow2 = predict("halving_doubling", params, Shape::uniform(1, 8), kLarge);
  EXPECT_DOUBLE_EQ(pow2->latency_s, 2 * 3 * 1e-6);
  EXPECT_NEAR(pow2->bandwidth_s, 2.0 * 7 / 8 * m * 1e-10, 1e-12);
  EXPECT_NEAR(pow2->reduction_s, 7.0 / 8 * m * 5e-11, 1e-12);
  // 12 ranks: the 8-rank core plus the fold-in (alpha + M beta + M gamma) and the hand-back.
  const auto twelve = predict("halving_doubling", params, Shape::uniform(1, 12), kLarge);
  EXPECT_DOUBLE_EQ(twelve->latency_s, pow2->latency_s + 2e-6);
  EXPECT_NEAR(twelve->bandwidth_s, pow2->bandwidth_s + 2 * m * 1e-10, 1e-12);
  EXPECT_NEAR(twelve->reduction_s, pow2->reduction_s + m * 5e-11, 1e-12);
}

TEST(CostModel, RecursiveDoublingSendsTheWholeVectorEveryStep) {
  const CostParams params = flat();
  const double m = double(kLarge);
  const auto pow2 = predict("recursive_doubling", params, Shape::uniform(1, 8), kLarge);
  EXPECT_DOUBLE_EQ(pow2->latency_s, 3 * 1e-6);
  EXPECT_NEAR(pow2->bandwidth_s, 3 * m * 1e-10, 1e-12);
  EXPECT_NEAR(pow2->reduction_s, 3 * m * 5e-11, 1e-12);
  // Half of halving-doubling's steps, log2(p) / (2(p-1)/p) times its bytes.
  const auto halving = predict("halving_doubling", params, Shape::uniform(1, 8), kLarge);
  EXPECT_DOUBLE_EQ(pow2->latency_s * 2, halving->latency_s);
  EXPECT_GT(pow2->bandwidth_s, halving->bandwidth_s);
  // 12 ranks: the fold-in and the hand-back, as halving-doubling's.
  const auto twelve = predict("recursive_doubling", params, Shape::uniform(1, 12), kLarge);
  EXPECT_DOUBLE_EQ(twelve->latency_s, pow2->latency_s + 2e-6);
  EXPECT_NEAR(twelve->bandwidth_s, pow2->bandwidth_s + 2 * m * 1e-10, 1e-12);
  EXPECT_NEAR(twelve->reduction_s, pow2->reduction_s + m * 5e-11, 1e-12);
}

TEST(CostModel, TreeUsesTheOptimalSegmentCount) {
  const CostParams params = flat(1e-6, 1e-10, 0);
  const double m = double(kLarge), depth = 4;  // 16 ranks
  const auto tree = predict("tree", params, Shape::uniform(1, 16), kLarge);
  // Each pipeline step's two messages hold a rank's port alpha each.
  const double k_star = std::sqrt(depth * m * 2e-10 / 4e-6);
  auto t = [&](double k) { return 2 * (depth + k - 1) * (2e-6 + m / k * 1e-10); };
  EXPECT_LE(tree->total_s(), t(std::floor(k_star)) * (1 + 1e-12));
  EXPECT_LE(tree->total_s(), t(std::ceil(k_star)) * (1 + 1e-12));
  // Close to the closed form 2M beta + 4 D alpha + 4 sqrt(2 D alpha M beta) (see tree.cc).
  const double closed =
      2 * m * 1e-10 + 4 * depth * 1e-6 + 4 * std::sqrt(2 * depth * 1e-6 * m * 1e-10);
  EXPECT_NEAR(tree->total_s(), closed, closed * 0.01);
  // Tiny messages: one segment, 2D steps of two alphas.
  EXPECT_DOUBLE_EQ(predict("tree", params, Shape::uniform(1, 16), kSmall)->latency_s, 16e-6);
}

TEST(CostModel, LatencyBoundWinsAtEightBytesOnAFlatNetwork) {
  for (const Shape& shape : {Shape::uniform(1, 16), Shape::uniform(4, 4), Shape::uniform(1, 6)}) {
    const auto explanation = explain(flat(), shape, kSmall, kFlatCandidates);
    EXPECT_NE(explanation.winner, "ring") << shape.describe() << ": " << explanation.reason;
    // At 6 ranks halving-doubling's 6 alphas (4 in its core, 2 folding ranks in and out) beat
    // the ring's 10; at 16 its 8 beat 30.
    EXPECT_LT(total(explanation.winner, flat(), shape, kSmall),
              0.65 * total("ring", flat(), shape, kSmall));
  }
}

TEST(CostModel, BandwidthOptimalWinsAt64MiBOnAFlatNetwork) {
  for (const Shape& shape : {Shape::uniform(1, 16), Shape::uniform(1, 12), Shape::uniform(1, 6)}) {
    const std::string winner = choose(flat(), shape, kLarge, kFlatCandidates);
    EXPECT_TRUE(winner == "ring" || winner == "halving_doubling") << shape.describe();
    EXPECT_LT(total(winner, flat(), shape, kLarge), total("tree", flat(), shape, kLarge));
  }
  // Not a power of two: halving-doubling pays its extra steps and the ring wins.
  EXPECT_EQ(choose(flat(), Shape::uniform(1, 12), kLarge, kFlatCandidates), "ring");
  // The co-located parameter server moves the ring's bytes on a flat single-node network.
  EXPECT_NEAR(total("ps", flat(), Shape::uniform(1, 8), kLarge),
              total("ring", flat(), Shape::uniform(1, 8), kLarge), 1e-12);
}

TEST(CostModel, ShmPaysAHandOffPerSlotRoundAndIsDirectWithoutSlots) {
  CostParams params = flat(1e-6, 1e-10, 1e-10);
  const Shape pair = Shape::uniform(1, 2);
  const std::vector<std::string> candidates{"ring", "direct", "shm"};
  // No measured hand-off (presets, a transport without slots): it runs, and is priced, as direct.
  EXPECT_DOUBLE_EQ(total("shm", params, pair, 8), total("direct", params, pair, 8));
  EXPECT_EQ(choose(params, pair, 8, candidates), "direct");
  params.transport.slot_handoff_s = 0.2e-6;
  // One copy into the slot (half a message's beta), a reduction with one operand in cache (2/3
  // of gamma).
  EXPECT_NEAR(total("shm", params, pair, 8), 0.2e-6 + 8 * 0.5e-10 + 8 * 1e-10 * 2 / 3, 1e-15);
  EXPECT_EQ(choose(params, pair, 8, candidates), "shm");
  // A slot holds 64 KiB: 1 MiB takes 16 rounds.
  EXPECT_NEAR(total("shm", params, pair, 1 << 20) - total("shm", params, pair, 1 << 16),
              15 * 0.2e-6 + 15 * (1 << 16) * (0.5e-10 + 1e-10 * 2 / 3), 1e-12);
  // Across nodes it runs direct.
  EXPECT_DOUBLE_EQ(total("shm", params, Shape::uniform(2, 2), 8),
                   total("direct", params, Shape::uniform(2, 2), 8));
  // Ranks sharing cores: a round costs the measured scheduler hand-over, not the line's.
  const CostParams shared = coll::model::sharing_cores(params, 2);
  EXPECT_DOUBLE_EQ(shared.transport.slot_handoff_s, coll::model::kSlotHandOverSeconds);
  EXPECT_EQ(choose(shared, Shape::uniform(1, 4), 8, candidates), "shm");
}

// Past 1 MiB the peers' slots stream through the caches: each costs its reader a copy across
// cores, and on plain buffers peer_read (staged up to 4 MiB, then a read call per 256 KiB piece;
// the build VM's preset) wins at 2-64 MiB, where at 2 ranks shm was priced 1-6 % ahead and
// measured up to 1.9x behind (docs/algorithms.md).
TEST(CostModel, ShmPaysACopyOfEachPeersSlotPastOneMiB) {
  CostParams params = flat(0.5e-6, 0.0714e-9, 0.1e-9);
  params.transport.slot_handoff_s = 0.27e-6;
  params.transport.peer_read_call_s = 2.2e-6;
  const double beta = params.intra.beta_s_per_byte;
  const std::vector<std::string> candidates{"shm", "peer_read"};
  for (const int ranks : {2, 4}) {
    const Shape node = Shape::uniform(1, ranks);
    const double limit = 1 << 20;
    const double round =
        params.transport.slot_handoff_s + (1 << 16) * (beta / 2 + (ranks - 1) * 0.1e-9 * 2 / 3);
    EXPECT_NEAR(total("shm", params, node, limit) - total("shm", params, node, limit - (1 << 16)),
                round, 1e-12);
    EXPECT_NEAR(total("shm", params, node, limit + (1 << 16)) - total("shm", params, node, limit),
                round + (ranks - 1) * (limit + (1 << 16)) * beta / 2, 1e-12);
    EXPECT_NE(predict("shm", params, node, limit + 1)->detail.find("across cores"),
              std::string::npos);
    for (const std::size_t m : {2u << 20, 4u << 20, 16u << 20, 64u << 20}) {
      EXPECT_EQ(choose(params, node, m, candidates), "peer_read") << ranks << " ranks, " << m;
    }
  }
}

TEST(CostModel, HierarchicalWinsWhenInterBetaIsTenTimesIntra) {
  CostParams params = flat(2e-6, 1e-10, 1e-11);
  params.inter.beta_s_per_byte = 10 * params.intra.beta_s_per_byte;
  const Shape shape = Shape::uniform(4, 4);
  const auto explanation = explain(params, shape, kLarge, modeled_algorithms());
  EXPECT_EQ(explanation.winner, "hierarchical") << explanation.reason;
  EXPECT_NE(explanation.reason.find("hierarchical predicted"), std::string::npos);
  // Its NIC carries what a flat ring's does, but only 2(N-1) steps wait for it.
  const auto hier = explanation.winning();
  ASSERT_NE(hier, nullptr);
  const double m = double(kLarge);
  EXPECT_NEAR(hier->bandwidth_s, 1.5 * m * 1e-10 + 1.5 * m * 1e-9, 1e-9);
  // On a flat network of the same shape, it has no advantage over the flat algorithms.
  EXPECT_NE(choose(flat(), shape, kLarge, modeled_algorithms()), "hierarchical");
}

// Nodes emulated on one host over loopback have no NIC: a flow to another node costs only the
// rank that copies it, so the algorithms whose ranks of a node send across at once (direct,
// halving-doubling's far steps, the parameter server, hierarchical's rails) cost less, while a
// flat ring, one flow per node, costs the same.
TEST(CostModel, WithoutANicToShareEachInterNodeFlowCostsItsRankAlone) {
  CostParams nic = flat(2e-6, 1e-10, 0);
  nic.inter.beta_s_per_byte = 1e-9;
  CostParams loopback = nic;
  loopback.transport.nic_shared = false;
  const Shape shape = Shape::uniform(2, 2);
  const double m = double(kLarge);
  auto bandwidth = [&](std::string_view name, const CostParams& params) {
    return predict(name, params, shape, kLarge)->bandwidth_s;
  };
  EXPECT_DOUBLE_EQ(bandwidth("ring", loopback), bandwidth("ring", nic));
  // direct: per rank 1 vector in its node, 2 across; through a NIC the node's 2 ranks' 4 share it.
  EXPECT_NEAR(bandwidth("direct", nic), m * 1e-10 + 4 * m * 1e-9, 1e-9);
  EXPECT_NEAR(bandwidth("direct", loopback), m * 1e-10 + 2 * m * 1e-9, 1e-9);
  for (const char* name : {"halving_doubling", "ps", "hierarchical"}) {
    EXPECT_LT(bandwidth(name, loopback), 0.75 * bandwidth(name, nic)) << name;
  }
}

TEST(CostModel, EveryFormulaHandlesUnevenAndSingleRankShapes) {
  CostParams params = flat();
  params.inter = {5e-6, 1e-9};
  const Shape uneven = Shape::from_node_of_rank({0, 0, 0, 1, 1, 2, 2, 2, 2});
  for (const auto& name : modeled_algorithms()) {
    const auto small = predict(name, params, uneven, kSmall);
    const auto large = predict(name, params, uneven, kLarge);
    ASSERT_TRUE(small && large) << name;
    EXPECT_TRUE(std::isfinite(large->total_s())) << name;
    EXPECT_GT(small->latency_s, 0) << name;
    EXPECT_GT(large->total_s(), small->total_s()) << name;
    EXPECT_EQ(predict(name, params, Shape::uniform(1, 1), kLarge)->total_s(), 0) << name;
  }
  // Ranks of the 2-rank node run two rails one after another: 2(N-1)*2 inter alphas.
  EXPECT_DOUBLE_EQ(predict("hierarchical", params, uneven, kSmall)->latency_s,
                   2 * 3 * 1e-6 + 2 * 2 * 2 * 5e-6);
}

TEST(CostModel, CandidatesWithoutAFormulaAreSkippedWithANote) {
  const auto explanation = explain(flat(), Shape::uniform(1, 4), kSmall, {"native_mpi", "ring"});
  ASSERT_EQ(explanation.candidates.size(), 2u);
  EXPECT_FALSE(explanation.candidates[0].prediction);
  EXPECT_NE(explanation.candidates[0].note.find("no formula"), std::string::npos);
  EXPECT_EQ(explanation.winner, "ring");
  EXPECT_EQ(explain(flat(), Shape::uniform(1, 4), kSmall, {"nccl"}).winner, "");
}

TEST(CostModel, EveryAlgorithmThisProcessCanRunHasAFormulaThatAutoConsiders) {
  const Selector selector(flat(), {0, 0, 1, 1, 2}, Tuning{});
  const Explanation explanation = selector.explain(kLarge);
  std::size_t available = 0;
  for (const AlgorithmInfo& info : allreduce_algorithms()) {
    if (!is_available(info)) continue;
    ++available;
    EXPECT_NE(info.cost, nullptr) << info.name << " has no cost formula: auto would never pick it";
    const auto found =
        std::find_if(explanation.candidates.begin(), explanation.candidates.end(),
                     [&](const CandidateResult& candidate) { return candidate.name == info.name; });
    ASSERT_NE(found, explanation.candidates.end()) << info.name;
    EXPECT_TRUE(found->prediction) << info.name << ": " << found->note;
  }
  EXPECT_EQ(explanation.candidates.size(), available);
  EXPECT_GE(available, modeled_algorithms().size());
}

TEST(CostModel, HierarchicalFormulaRunsItsLevelsAlgorithms) {
  CostParams params = flat(2e-6, 1e-10, 1e-11);
  params.inter = {8e-6, 1e-9};
  const Shape shape = Shape::uniform(4, 4), rails = Shape::uniform(4, 1);
  const double m = double(kLarge);
  Tuning ring_across, tree_across;
  ring_across.algorithm_options.set("COLL_HIER_INTER", "ring");
  tree_across.algorithm_options.set("COLL_HIER_INTER", "tree");
  for (const char* name : {"hierarchical", "hierarchical_leader"}) {
    const auto ring_levels = predict(name, params, shape, kLarge, ring_across);
    const auto tree_inter = predict(name, params, shape, kLarge, tree_across);
    ASSERT_TRUE(ring_levels && tree_inter) << name;
    // Only the inter-node level changed: the difference is tree's bandwidth minus ring's at M.
    EXPECT_NEAR(tree_inter->bandwidth_s - ring_levels->bandwidth_s,
                predict("tree", params, rails, kLarge)->bandwidth_s -
                    predict("ring", params, rails, kLarge)->bandwidth_s,
                1e-12)
        << name;
    EXPECT_NE(tree_inter->detail.find("tree"), std::string::npos) << tree_inter->detail;
  }
  // The intra level as a full all-reduce (halving-doubling), then the ring all-gather.
  Tuning hd_within;
  hd_within.algorithm_options.set("COLL_HIER_INTRA", "halving_doubling");
  const auto hd = predict("hierarchical", params, shape, kLarge, hd_within);
  const auto node = predict("halving_doubling", params, Shape::uniform(1, 4), kLarge);
  ASSERT_TRUE(hd && node);
  EXPECT_NEAR(hd->bandwidth_s, node->bandwidth_s + 3.0 / 4 * m * 1e-10 + 2.0 * 3 / 4 * m * 1e-9,
              1e-9);
  // A level without a formula leaves hierarchical without one: auto skips it with a note.
  for (const char* level : {"native_mpi", "hierarchical", "nosuch"}) {
    Tuning bad;
    bad.algorithm_options.set("COLL_HIER_INTER", level);
    EXPECT_FALSE(predict("hierarchical", params, shape, kLarge, bad)) << level;
    const auto explanation = explain(params, shape, kLarge, {"ring", "hierarchical"}, bad);
    EXPECT_EQ(explanation.winner, "ring");
    EXPECT_NE(explanation.candidates[1].note.find("no formula"), std::string::npos);
  }
}

TEST(CostModel, TheLeadersGatherAndScatterPassItsOnePortOneFlowAtATime) {
  // The ring's steps are staged; the leader's two extra phases cost three alphas (its three
  // messages pass its port in turn) and 3/4 M at one flow's beta each.
  const CostParams staged = staged_node_params();
  const Shape node = Shape::uniform(1, 4);
  const auto ring = predict("ring", staged, node, kLarge);
  const auto leader = predict("hierarchical_leader", staged, node, kLarge);
  const double m = double(kLarge);
  ASSERT_TRUE(ring && leader);
  EXPECT_DOUBLE_EQ(ring->bandwidth_s, 2 * 3.0 / 4 * m * 16e-11);
  EXPECT_NEAR(leader->latency_s - ring->latency_s, 2 * 3 * 2e-6, 1e-15);
  EXPECT_NEAR(leader->bandwidth_s - ring->bandwidth_s, 2 * 3.0 / 4 * m * 1e-10, 1e-12);
}

TEST(CostModel, AutoInterLevelIsTheCompositionPricedFastest) {
  CostParams params = flat(2e-6, 1e-10, 1e-11);
  params.inter = {8e-6, 1e-9};
  Tuning ring_across, halving_across;
  ring_across.algorithm_options.set("COLL_HIER_INTER", "ring");
  halving_across.algorithm_options.set("COLL_HIER_INTER", "halving_doubling");
  std::map<std::string, int> chosen;
  for (const Shape& shape : {Shape::uniform(4, 4), Shape::uniform(3, 2)}) {
    for (const char* name : {"hierarchical", "hierarchical_leader"}) {
      for (const std::size_t bytes : {std::size_t{8} << 10, kLarge}) {
        const auto automatic = predict(name, params, shape, bytes, Tuning{});
        const auto ring = predict(name, params, shape, bytes, ring_across);
        const auto halving = predict(name, params, shape, bytes, halving_across);
        ASSERT_TRUE(automatic && ring && halving) << name;
        const bool ring_wins = ring->total_s() < halving->total_s();
        EXPECT_DOUBLE_EQ(automatic->total_s(), std::min(ring->total_s(), halving->total_s()))
            << name << " " << bytes;
        EXPECT_EQ(automatic->detail, (ring_wins ? ring : halving)->detail);
        ++chosen[ring_wins ? "ring" : "halving_doubling"];
      }
    }
  }
  // Fewer steps across nodes for small vectors; 3 nodes make halving-doubling's extra steps
  // dearer than the ring for large ones.
  EXPECT_GT(chosen["halving_doubling"], 0);
  EXPECT_GT(chosen["ring"], 0);
}

TEST(CostModel, BusFactorsComeFromTheRegistryWithTheTuning) {
  const BusFactor standard = bus_factor("ring", 8, Tuning{});
  EXPECT_DOUBLE_EQ(standard.factor, 2.0 * 7 / 8);
  EXPECT_TRUE(standard.standard);
  Tuning two_servers;
  two_servers.algorithm_options.set("COLL_PS_SERVERS", "2");
  const BusFactor workers = bus_factor("ps", 8, two_servers);
  EXPECT_DOUBLE_EQ(workers.factor, 1.0);  // 2(k-1)/k, k = 2
  EXPECT_FALSE(workers.standard);
  EXPECT_NE(workers.definition.find("k = 2 servers"), std::string::npos) << workers.definition;
  EXPECT_DOUBLE_EQ(bus_factor("ps", 8, Tuning{}).factor, 2.0 * 7 / 8);  // every rank serves
  EXPECT_DOUBLE_EQ(bus_factor("no-such-algorithm", 4, Tuning{}).factor, 2.0 * 3 / 4);
}

TEST(CostModel, ThePublicCatalogueDescribesEveryRegisteredAlgorithm) {
  const auto descriptions = describe_algorithms();
  ASSERT_EQ(descriptions.size(), allreduce_algorithms().size());
  EXPECT_EQ(descriptions.front().name, "ring");
  for (std::size_t i = 0; i < descriptions.size(); ++i) {
    const AlgorithmInfo& info = allreduce_algorithms()[i];
    const AlgorithmDescription& description = descriptions[i];
    EXPECT_EQ(description.name, info.name);
    EXPECT_EQ(description.summary, info.summary);
    EXPECT_EQ(description.available, is_available(info)) << description.name;
    EXPECT_EQ(description.modeled, info.cost != nullptr) << description.name;
    const auto found = describe_algorithm(description.name);
    ASSERT_TRUE(found.has_value()) << description.name;
    EXPECT_EQ(found->name, description.name);
  }
  EXPECT_FALSE(describe_algorithm("no-such-algorithm").has_value());
}

TEST(CostModel, EachSelectorKeepsItsOwnParametersAndChoices) {
  CostParams slow_network = flat(2e-6, 1e-10, 1e-11);
  slow_network.inter.beta_s_per_byte = 10 * slow_network.intra.beta_s_per_byte;
  const std::vector<int> nodes{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  const Selector hierarchical(slow_network, nodes, Tuning{});
  const Selector flat_network(flat(), nodes, Tuning{});
  EXPECT_EQ(hierarchical.choose(kLarge), "hierarchical");
  EXPECT_NE(flat_network.choose(kLarge), "hierarchical");
  EXPECT_EQ(hierarchical.choose(kLarge), "hierarchical");  // not the other one's cached pick
}

class CalibrationFile : public ::testing::Test {
 protected:
  std::string path =
      ::testing::TempDir() + "/cost_model_test_" + std::to_string(::getpid()) + "/cal.txt";
  void TearDown() override {
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
    ::unsetenv("COLL_CALIBRATION_FILE");
    ::unsetenv("COLL_COST_PRESET");
  }
  void write(const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
  }
  std::string load_error() {
    try {
      load_calibration(path);
    } catch (const Error& error) {
      return error.what();
    }
    return "no error";
  }
};

TEST_F(CalibrationFile, RoundTrip) {
  EXPECT_FALSE(load_calibration(path));  // absent is not an error
  Calibration saved;
  saved.host = "host-a";
  saved.params = flat(4.5e-7, 1.0 / 13e9, 9.75e-11);
  saved.params.inter = {8.25e-6, 1.0 / 3.1e9};
  save_calibration(saved, path);
  const auto loaded = load_calibration(path);
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->host, "host-a");
  EXPECT_EQ(loaded->params.intra.alpha_s, saved.params.intra.alpha_s);
  EXPECT_EQ(loaded->params.intra.beta_s_per_byte, saved.params.intra.beta_s_per_byte);
  EXPECT_EQ(loaded->params.inter.alpha_s, saved.params.inter.alpha_s);
  EXPECT_EQ(loaded->params.inter.beta_s_per_byte, saved.params.inter.beta_s_per_byte);
  EXPECT_EQ(loaded->params.gamma_s_per_byte, saved.params.gamma_s_per_byte);
  EXPECT_NE(loaded->params.source.find(path), std::string::npos);
}

TEST_F(CalibrationFile, MalformedFilesAreRejectedClearly) {
  const std::string good =
      "format = libcoll-calibration 1\nhost = h\nintra.alpha_s = 1e-6\n"
      "intra.beta_s_per_byte = 1e-10\ninter.alpha_s = 1e-5\ninter.beta_s_per_byte = 1e-9\n"
      "gamma_s_per_byte = 1e-10\n";
  write(good);
  EXPECT_EQ(load_error(), "no error");
  const std::pair<std::string, std::string> cases[] = {
      {good + "garbage\n", "line 8: expected 'key = value'"},
      {good + "inter.alpha = 3\n", "unknown key 'inter.alpha'"},
      {good + "host = h2\n", "duplicate key 'host'"},
      {"format = something else\n", "format is 'something else'"},
      {good.substr(0, good.find("gamma")), "missing 'gamma_s_per_byte'"},
      {std::string(good).replace(good.find("1e-9"), 4, "fast"),
       "'inter.beta_s_per_byte' is 'fast'"},
      {std::string(good).replace(good.find("1e-6"), 4, "-1"), "not a positive number"},
  };
  for (const auto& [text, expected] : cases) {
    write(text);
    const std::string error = load_error();
    EXPECT_NE(error.find("calibration file " + path), std::string::npos) << error;
    EXPECT_NE(error.find(expected), std::string::npos) << error;
    EXPECT_NE(error.find("collbench --calibrate"), std::string::npos) << error;
  }
}

TEST_F(CalibrationFile, ParametersInUseFollowPresetThenFileThenDefault) {
  ::setenv("COLL_CALIBRATION_FILE", path.c_str(), 1);
  const auto unset = [] { return resolve_params("", "COLL_COST_PRESET"); };
  EXPECT_NE(unset().source.find("preset this-vm (no calibration file"), std::string::npos);
  save_calibration({flat(), this_host()}, path);
  EXPECT_EQ(unset().intra.alpha_s, 1e-6);
  EXPECT_NE(unset().source.find("calibration " + path), std::string::npos);
  save_calibration({flat(), "elsewhere"}, path);
  EXPECT_NE(unset().source.find("measured on host 'elsewhere'"), std::string::npos);
  const CostParams preset = resolve_params("p40-cluster", "--cost-preset");
  EXPECT_NE(preset.source.find("preset p40-cluster"), std::string::npos);
  EXPECT_NE(preset.source.find("(--cost-preset)"), std::string::npos);
  try {
    resolve_params("nosuch", "COLL_COST_PRESET");
    ADD_FAILURE() << "an unknown preset was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("COLL_COST_PRESET"), std::string::npos)
        << error.what();
  }
}

// The communicator's settings carry the preset from the environment (Config::cost_preset).
TEST(Config, CostPresetComesFromTheEnvironment) {
  ::setenv("COLL_COST_PRESET", "p40-cluster", 1);
  EXPECT_EQ(Config::from_environment().cost_preset, "p40-cluster");
  ::unsetenv("COLL_COST_PRESET");
  EXPECT_EQ(Config::from_environment().cost_preset, "");
}

TEST(CostModel, SelectorPicksARegisteredAlgorithm) {
  const Selector selector(*find_preset("this-vm"), {0, 0, 1, 1}, Tuning{});
  const auto registered = registered_candidates();
  const std::string choice = selector.choose(1 << 20);
  EXPECT_NE(std::find(registered.begin(), registered.end(), choice), registered.end()) << choice;
  EXPECT_EQ(selector.choose(1 << 20), choice);  // cached, and stable
  EXPECT_EQ(choice, selector.explain(1 << 20).winner);
}

}  // namespace
}  // namespace coll::model
