// Fusion policies: parsing, coverage and byte limits of every plan, DDP's smaller first bucket,
// zero-size tensors, and MG-WFBP's plan against a brute force over all contiguous partitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "coll/error.hpp"
#include "study/fusion_plan.hpp"
#include "study/iteration_sim.hpp"

namespace coll::study {
namespace {

AllreduceCost alpha_beta(double alpha, double beta) {
  return [=](std::size_t bytes) { return alpha + beta * static_cast<double>(bytes); };
}

ComputeProfile profile_of(std::vector<double> seconds) {
  return {"test", std::move(seconds)};
}

struct Instance {
  std::vector<std::size_t> bytes;
  ComputeProfile profile;
  AllreduceCost cost;
};

// n tensors; sizes up to 8 MB with some zeros; compute up to 4 ms with some zeros (tensors of
// one layer); alpha 10 us..2 ms, beta 0.05..2 ns/B (0.5..20 GB/s).
Instance random_instance(std::mt19937& rng, std::size_t n) {
  std::uniform_real_distribution<double> unit(0, 1);
  Instance instance;
  instance.profile.source = "random";
  for (std::size_t i = 0; i < n; ++i) {
    instance.bytes.push_back(unit(rng) < 0.15 ? 0 : static_cast<std::size_t>(unit(rng) * 8e6));
    instance.profile.backward_s.push_back(unit(rng) < 0.3 ? 0.0 : unit(rng) * 4e-3);
  }
  const double alpha = 1e-5 * std::pow(200.0, unit(rng));
  const double beta = 5e-11 * std::pow(40.0, unit(rng));
  instance.cost = alpha_beta(alpha, beta);
  return instance;
}

std::vector<Bucket> buckets_of_mask(const std::vector<std::size_t>& bytes, unsigned mask) {
  std::vector<Bucket> buckets;  // bit i set: a cut after tensor i
  std::size_t first = 0, sum = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    sum += bytes[i];
    if (i + 1 == bytes.size() || (mask >> i & 1u)) {
      buckets.push_back({first, i + 1, sum});
      first = i + 1;
      sum = 0;
    }
  }
  return buckets;
}

double brute_force_best(const Instance& instance) {
  double best = INFINITY;
  const std::size_t n = instance.bytes.size();
  for (unsigned mask = 0; mask < (1u << (n - 1)); ++mask) {
    const auto buckets = buckets_of_mask(instance.bytes, mask);
    best = std::min(best, simulate_wfbp(buckets, instance.profile, instance.cost).iteration_s);
  }
  return best;
}

double simulated(const std::vector<Bucket>& buckets, const Instance& instance) {
  return simulate_wfbp(buckets, instance.profile, instance.cost).iteration_s;
}

void expect_invalid(const std::string& text) {
  try {
    parse_policy(text);
    ADD_FAILURE() << "accepted '" << text << "'";
  } catch (const Error& error) {
    EXPECT_EQ(error.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("'" + text + "'"), std::string::npos) << error.what();
  }
}

TEST(FusionPolicy, ParsesEveryPolicyAndSuffix) {
  EXPECT_EQ(parse_policy("none").kind, PolicyKind::None);
  EXPECT_EQ(parse_policy("layer").kind, PolicyKind::Layer);
  EXPECT_EQ(parse_policy("layer").text(), "layer");
  EXPECT_EQ(parse_policy("mgwfbp").kind, PolicyKind::MgWfbp);
  EXPECT_EQ(parse_policy("auto").kind, PolicyKind::Auto);
  const Policy threshold = parse_policy("threshold:128M");
  EXPECT_EQ(threshold.kind, PolicyKind::Threshold);
  EXPECT_EQ(threshold.bytes, kHorovodFusionBytes);
  const Policy buckets = parse_policy("buckets:25M");
  EXPECT_EQ(buckets.kind, PolicyKind::Buckets);
  EXPECT_EQ(buckets.bytes, kDdpBucketCapBytes);
  EXPECT_EQ(parse_policy("threshold:1000").bytes, 1000u);
  EXPECT_EQ(parse_policy("threshold:4k").bytes, 4096u);
  EXPECT_EQ(parse_policy("buckets:2G").bytes, std::size_t{2} << 30);
  EXPECT_EQ(parse_policy("buckets:25M").text(), "buckets:25M");
  EXPECT_EQ(parse_policy("threshold:1000").text(), "threshold:1000");
  for (const std::string& text : auto_candidates()) EXPECT_EQ(parse_policy(text).text(), text);
}

TEST(FusionPolicy, RejectsMalformedTextNamingIt) {
  for (const char* text : {"", "None", "threshold", "threshold:", "threshold:0", "threshold:12X",
                           "buckets:-1", "buckets:25XB", "buckets: 25M", "mg-wfbp", "auto:1M",
                           "threshold:99999999999999999999", "threshold:99999999999G"}) {
    expect_invalid(text);
  }
}

TEST(FusionPlan, NoneIsOneBucketPerTensor) {
  const std::vector<std::size_t> bytes{4, 0, 9};
  EXPECT_EQ(plan_none(bytes), (std::vector<Bucket>{{0, 1, 4}, {1, 2, 0}, {2, 3, 9}}));
}

TEST(FusionPlan, LayerGroupsConsecutiveTensorsOfOneLayer) {
  const std::vector<std::size_t> bytes{4, 8, 16, 32, 64};
  const std::vector<std::string> layers{"fc", "fc", "conv2", "conv1", "conv1"};
  EXPECT_EQ(plan_layers(bytes, layers), (std::vector<Bucket>{{0, 2, 12}, {2, 3, 16}, {3, 5, 96}}));
  const FusionPlan plan = make_plan(parse_policy("layer"), bytes, profile_of({1, 0, 1, 1, 0}),
                                    alpha_beta(1, 1), layers);
  EXPECT_EQ(plan.buckets.size(), 3u);
  EXPECT_EQ(plan.policy, "layer");
  EXPECT_THROW(plan_layers(bytes, {"fc"}), Error);  // a name per tensor, or nothing plans
  EXPECT_THROW(
      make_plan(parse_policy("layer"), bytes, profile_of({1, 0, 1, 1, 0}), alpha_beta(1, 1)),
      Error);
}

TEST(FusionPlan, ThresholdFillsGreedilyAndIsolatesLargeTensors) {
  const std::vector<std::size_t> bytes{3, 4, 3, 12, 5, 5, 0, 1};
  // 3+4+3 = 10 fits; +12 would not; 12 > 10 alone; 5+5+0 = 10; +1 would exceed.
  EXPECT_EQ(plan_threshold(bytes, 10),
            (std::vector<Bucket>{{0, 3, 10}, {3, 4, 12}, {4, 7, 10}, {7, 8, 1}}));
}

TEST(FusionPlan, ThresholdRespectsLimitOnRandomSizes) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    const std::size_t limit = 1 + rng() % 5000000;
    std::vector<std::size_t> bytes(1 + rng() % 40);
    for (auto& b : bytes) b = rng() % 4 == 0 ? 0 : rng() % 3000000;
    const auto plan = plan_threshold(bytes, limit);
    check_plan(plan, bytes);
    for (std::size_t b = 0; b < plan.size(); ++b) {
      if (plan[b].bytes > limit) {
        EXPECT_EQ(plan[b].last - plan[b].first, 1u);
      }                           // alone
      if (b + 1 < plan.size()) {  // greedy: the next tensor did not fit
        EXPECT_GT(plan[b].bytes + bytes[plan[b].last], limit);
      }
    }
  }
}

TEST(FusionPlan, DdpFirstBucketIsSmaller) {
  const std::vector<std::size_t> bytes(200, 300u << 10);  // 200 tensors of 300 KiB
  const auto plan = plan_ddp_buckets(bytes, kDdpBucketCapBytes);
  check_plan(plan, bytes);
  ASSERT_GE(plan.size(), 3u);
  EXPECT_EQ(plan[0].last, 4u);  // 4 x 300 KiB = 1200 KiB >= 1 MiB closes the first bucket
  EXPECT_EQ(plan[1].last - plan[1].first, 86u);  // 86 x 300 KiB = 25800 KiB >= 25 MiB
  EXPECT_LT(plan[0].bytes, plan[1].bytes);
}

TEST(FusionPlan, DdpBucketsCloseAtTheirLimit) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    const std::size_t cap = 1 + rng() % 4000000;
    std::vector<std::size_t> bytes(1 + rng() % 40);
    for (auto& b : bytes) b = rng() % 4 == 0 ? 0 : rng() % 3000000;
    const auto plan = plan_ddp_buckets(bytes, cap);
    check_plan(plan, bytes);
    for (std::size_t b = 0; b < plan.size(); ++b) {
      const std::size_t limit = b == 0 ? std::min(kDdpFirstBucketBytes, cap) : cap;
      const std::size_t without_last = plan[b].bytes - bytes[plan[b].last - 1];
      EXPECT_LT(without_last, limit);  // over the limit by at most its last tensor
      if (b + 1 < plan.size()) {
        EXPECT_GE(plan[b].bytes, limit);
      }
    }
  }
}

TEST(FusionPlan, ZeroSizeTensorsAreCoveredByEveryPolicy) {
  const std::vector<std::size_t> bytes{0, 0, 5, 0};
  const ComputeProfile profile = profile_of({1e-3, 0, 1e-3, 0});
  for (const char* text :
       {"none", "threshold:1", "threshold:64M", "buckets:1", "buckets:25M", "mgwfbp", "auto"}) {
    const FusionPlan plan = make_plan(parse_policy(text), bytes, profile, alpha_beta(1e-4, 1e-9));
    check_plan(plan.buckets, bytes);
    EXPECT_NO_THROW(simulate_wfbp(plan.buckets, profile, alpha_beta(1e-4, 1e-9))) << text;
  }
  const std::vector<std::size_t> zeros(5, 0);
  const FusionPlan plan =
      make_plan(parse_policy("mgwfbp"), zeros, profile_of({1, 0, 0, 1, 0}), alpha_beta(1, 1));
  check_plan(plan.buckets, zeros);
  EXPECT_EQ(simulate_wfbp(plan.buckets, profile_of({1, 0, 0, 1, 0}), alpha_beta(1, 1)).comm_s, 0);
}

TEST(FusionPlan, EmptyModelHasNoBuckets) {
  for (const char* text : {"none", "threshold:1M", "buckets:1M", "mgwfbp", "auto"}) {
    EXPECT_TRUE(
        make_plan(parse_policy(text), {}, profile_of({}), alpha_beta(1, 1)).buckets.empty());
  }
}

TEST(FusionPlan, EveryPolicyCoversEveryTensorOnceInOrder) {
  std::mt19937 rng(3);
  for (int round = 0; round < 50; ++round) {
    const Instance instance = random_instance(rng, 1 + rng() % 60);
    for (const char* text : {"none", "threshold:4M", "threshold:128M", "buckets:1K", "buckets:25M",
                             "mgwfbp", "auto"}) {
      const FusionPlan plan =
          make_plan(parse_policy(text), instance.bytes, instance.profile, instance.cost);
      EXPECT_NO_THROW(check_plan(plan.buckets, instance.bytes)) << text;
    }
    EXPECT_NO_THROW(check_plan(plan_mgwfbp_greedy(instance.bytes, instance.profile, instance.cost),
                               instance.bytes));
  }
}

TEST(FusionPlan, CheckPlanRejectsGapsOverlapsAndWrongBytes) {
  const std::vector<std::size_t> bytes{1, 2, 3};
  EXPECT_THROW(check_plan({{0, 1, 1}, {2, 3, 3}}, bytes), Error);  // gap
  EXPECT_THROW(check_plan({{0, 2, 3}, {1, 3, 5}}, bytes), Error);  // overlap
  EXPECT_THROW(check_plan({{0, 2, 3}}, bytes), Error);             // short
  EXPECT_THROW(check_plan({{0, 3, 7}}, bytes), Error);             // bytes
  EXPECT_THROW(check_plan({{0, 0, 0}, {0, 3, 6}}, bytes), Error);  // empty bucket
  EXPECT_NO_THROW(check_plan({{0, 1, 1}, {1, 3, 5}}, bytes));
}

TEST(FusionPlan, ProfileOfAnotherModelIsRejected) {
  EXPECT_THROW(make_plan(parse_policy("mgwfbp"), {1, 2}, profile_of({1}), alpha_beta(1, 1)), Error);
}

TEST(FusionPlan, MgwfbpEqualsBruteForceOptimum) {
  std::mt19937 rng(2024);
  for (int round = 0; round < 400; ++round) {
    const Instance instance = random_instance(rng, 1 + rng() % 12);
    const double best = brute_force_best(instance);
    const double planned =
        simulated(plan_mgwfbp(instance.bytes, instance.profile, instance.cost), instance);
    EXPECT_NEAR(planned, best, 1e-12 * best) << "round " << round;
  }
}

TEST(FusionPlan, MgwfbpIsOptimalForANonLinearCost) {
  std::mt19937 rng(99);
  for (int round = 0; round < 200; ++round) {
    Instance instance = random_instance(rng, 1 + rng() % 12);
    // Protocol switch: a cheaper per-byte rate, at a higher start-up, above 1 MB.
    instance.cost = [](std::size_t bytes) {
      const double m = static_cast<double>(bytes);
      return bytes < 1000000 ? 2e-5 + 1e-9 * m : 4e-4 + 2e-10 * m;
    };
    const double best = brute_force_best(instance);
    EXPECT_NEAR(simulated(plan_mgwfbp(instance.bytes, instance.profile, instance.cost), instance),
                best, 1e-12 * best);
  }
}

TEST(FusionPlan, GreedyRuleIsNeverBetterAndSometimesWorse) {
  std::mt19937 rng(5);
  int worse = 0;
  for (int round = 0; round < 400; ++round) {
    const Instance instance = random_instance(rng, 2 + rng() % 11);
    const double optimum =
        simulated(plan_mgwfbp(instance.bytes, instance.profile, instance.cost), instance);
    const double greedy =
        simulated(plan_mgwfbp_greedy(instance.bytes, instance.profile, instance.cost), instance);
    EXPECT_GE(greedy, optimum * (1 - 1e-12));
    if (greedy > optimum * (1 + 1e-9)) ++worse;
  }
  EXPECT_GT(worse, 0) << "the greedy rule matched the optimum everywhere";
  RecordProperty("greedy_worse_of_400", worse);
}

TEST(FusionPlan, GreedyMergeOnHandExample) {
  // Two tensors ready at 1 s and 1.1 s, cost 0.5 s + 1 s/byte-unit: separately the second waits
  // for the first (ends 1.0+0.5+0.1 = 1.6, then 1.6+0.5+0.1 = 2.2); merged at 1.1: 1.1+0.5+0.2 =
  // 1.8. Both rules merge.
  const std::vector<std::size_t> bytes{1, 1};
  const ComputeProfile profile = profile_of({1.0, 0.1});
  const AllreduceCost cost = alpha_beta(0.5, 0.1);
  const std::vector<Bucket> merged{{0, 2, 2}};
  EXPECT_EQ(plan_mgwfbp_greedy(bytes, profile, cost), merged);
  EXPECT_EQ(plan_mgwfbp(bytes, profile, cost), merged);
  EXPECT_NEAR(simulate_wfbp(merged, profile, cost).iteration_s, 1.8, 1e-12);
  // With the second tensor 2 s later the first all-reduce is hidden: keep them apart.
  const ComputeProfile late = profile_of({1.0, 2.0});
  EXPECT_EQ(plan_mgwfbp(bytes, late, cost), (std::vector<Bucket>{{0, 1, 1}, {1, 2, 1}}));
}

TEST(FusionPlan, AutoPicksTheFastestCandidate) {
  std::mt19937 rng(8);
  for (int round = 0; round < 30; ++round) {
    const Instance instance = random_instance(rng, 1 + rng() % 40);
    const FusionPlan chosen =
        make_plan(parse_policy("auto"), instance.bytes, instance.profile, instance.cost);
    double best = INFINITY;
    for (const std::string& text : auto_candidates()) {
      const FusionPlan plan =
          make_plan(parse_policy(text), instance.bytes, instance.profile, instance.cost);
      best = std::min(best, simulated(plan.buckets, instance));
    }
    EXPECT_DOUBLE_EQ(simulated(chosen.buckets, instance), best);
    EXPECT_NE(std::find(auto_candidates().begin(), auto_candidates().end(), chosen.policy),
              auto_candidates().end());
    EXPECT_NE(chosen.note.find("chose " + chosen.policy), std::string::npos) << chosen.note;
  }
}

}  // namespace
}  // namespace coll::study
