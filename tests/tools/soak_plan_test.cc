// collbench --soak's operations: reproducible from the seed, covering every mode, collective and
// awkward size, never over the byte cap; and guard bytes that notice an overrun.
#include <gtest/gtest.h>

#include <set>

#include "guarded_buffer.hpp"
#include "soak_plan.hpp"

namespace {

using collbench::SoakMode;
using collbench::SoakPlan;
using collbench::SweepKind;

const std::vector<std::string> kAlgorithms{"ring", "tree", ""};

TEST(SoakPlan, AnOperationDependsOnlyOnTheSeedAndItsIndex) {
  const SoakPlan plan(42, 5, 1 << 20, kAlgorithms), same(42, 5, 1 << 20, kAlgorithms),
      other(43, 5, 1 << 20, kAlgorithms);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < 200; ++i) {
    EXPECT_EQ(describe(plan.op(i)), describe(same.op(i)));
    differing += describe(plan.op(i)) != describe(other.op(i));
  }
  EXPECT_EQ(describe(plan.op(17)), describe(SoakPlan(42, 5, 1 << 20, kAlgorithms).op(17)));
  EXPECT_GT(differing, 150u);
}

TEST(SoakPlan, CoversEveryModeCollectiveAndAwkwardSizeWithinTheCap) {
  constexpr int kRanks = 5;
  constexpr std::size_t kMaxBytes = 4 << 20;
  const SoakPlan plan(7, kRanks, kMaxBytes, kAlgorithms);
  std::set<SoakMode> modes;
  std::set<SweepKind> kinds;
  std::set<std::string> algorithms;
  std::set<int> types, ops;
  bool zero = false, one = false, below_ranks = false, not_divisible = false, large = false,
       in_place = false, out_of_place = false, blocking_tail = false;
  for (std::size_t i = 0; i < 3000; ++i) {
    const auto op = plan.op(i);
    modes.insert(op.mode);
    blocking_tail |= op.blocking_tail;
    std::size_t fused_bytes = 0;
    for (const auto& call : op.calls) {
      const std::size_t bytes = call.count * coll::dtype_size(call.type);
      EXPECT_LE(bytes, kMaxBytes) << describe(op);
      fused_bytes += bytes;
      kinds.insert(call.kind);
      if (call.kind == SweepKind::AllReduce) algorithms.insert(call.algorithm);
      types.insert(static_cast<int>(call.type));
      ops.insert(static_cast<int>(call.op));
      (call.in_place ? in_place : out_of_place) = true;
      if (call.kind == SweepKind::AllGather || call.kind == SweepKind::ReduceScatter) {
        EXPECT_EQ(call.count % kRanks, 0u) << describe(op);
        continue;
      }
      zero |= call.count == 0;
      one |= call.count == 1;
      below_ranks |= call.count > 1 && call.count < kRanks;
      not_divisible |= call.count > kRanks && call.count % kRanks != 0;
      large |= call.count > (std::size_t{1} << 18);
    }
    if (op.mode == SoakMode::Fused) {
      EXPECT_LE(fused_bytes, kMaxBytes) << describe(op);
      for (const auto& call : op.calls) EXPECT_TRUE(call.in_place);
    }
  }
  EXPECT_EQ(modes.size(), 3u);
  EXPECT_EQ(kinds.size(), 5u);
  EXPECT_EQ(algorithms, std::set<std::string>(kAlgorithms.begin(), kAlgorithms.end()));
  EXPECT_EQ(types.size(), std::size_t(coll::kNumDataTypes));
  EXPECT_EQ(ops.size(), std::size_t(coll::kNumReduceOps));
  EXPECT_TRUE(zero && one && below_ranks && not_divisible && large);
  EXPECT_TRUE(in_place && out_of_place && blocking_tail);
}

TEST(GuardedBuffer, NoticesAWriteJustBeforeOrJustAfterTheBuffer) {
  for (std::ptrdiff_t offset : {std::ptrdiff_t{-1}, std::ptrdiff_t{100}}) {
    collbench::GuardedBuffer buffer(100);
    std::fill(buffer.data(), buffer.data() + 100, std::byte{0xff});
    EXPECT_TRUE(buffer.intact());
    buffer.data()[offset] = std::byte{0};
    EXPECT_FALSE(buffer.intact()) << offset;
  }
  collbench::GuardedBuffer empty;
  EXPECT_TRUE(empty.intact());
  empty.data()[0] = std::byte{0};
  EXPECT_FALSE(empty.intact());
}

}  // namespace
