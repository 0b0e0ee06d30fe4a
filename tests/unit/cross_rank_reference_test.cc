// CrossRankReference: the reference the cross-rank bit tests judge results by (cross_rank_bits.hpp,
// which states the bound) rejects what it must.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cross_rank_bits.hpp"

namespace {

using namespace coll::testing::cross_rank;
using coll::ReduceOp;

// The reference rejects what the bound and IEEE rule out (and accepts what they allow): a check
// that cannot fail would pass every algorithm.
TEST(CrossRankReference, AcceptsWhatTheBoundAllowsAndRejectsTheRest) {
  const auto ok = [](const Format& f, ReduceOp op, std::vector<std::uint64_t> inputs,
                     std::uint64_t result) {
    return judge(f, op, inputs.data(), static_cast<int>(inputs.size()), result);
  };
  // float32 1 + 2^-24: both neighbours are within one rounding, two ulps away is not.
  EXPECT_EQ(ok(kFloat32, ReduceOp::Sum, {0x3f800000, 0x33800000}, 0x3f800000), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Sum, {0x3f800000, 0x33800000}, 0x3f800001), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Sum, {0x3f800000, 0x33800000}, 0x3f800002), "");
  // Subnormal sums are exact; the reference keeps subnormal float64 (long double's range).
  EXPECT_EQ(ok(kFloat16, ReduceOp::Sum, {0x0001, 0x0001, 0x8003}, 0x8001), "");
  EXPECT_NE(ok(kFloat16, ReduceOp::Sum, {0x0001, 0x0001, 0x8003}, 0x8000), "");
  EXPECT_EQ(ok(kFloat64, ReduceOp::Sum, {1, 2}, 3), "");
  EXPECT_NE(ok(kFloat64, ReduceOp::Sum, {1, 2}, 4), "");
  // Zeros: -0 only when every one is -0.
  EXPECT_EQ(ok(kBfloat16, ReduceOp::Sum, {0x8000, 0x8000}, 0x8000), "");
  EXPECT_NE(ok(kBfloat16, ReduceOp::Sum, {0x8000, 0x8000}, 0x0000), "");
  EXPECT_NE(ok(kBfloat16, ReduceOp::Sum, {0x8000, 0x0000}, 0x8000), "");
  // Infinities and NaN.
  EXPECT_EQ(ok(kFloat32, ReduceOp::Sum, {0x7f800000, 0xff800000}, 0xffc00000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Sum, {0x7f800000, 0xff800000}, 0x7f800000), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Sum, {0x7f800000, 0x3f800000}, 0x7f800000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Avg, {0x7f800000, 0x3f800000}, 0x7f7fffff), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Sum, {0x7f800001, 0x3f800000}, 0x3f800000), "");
  EXPECT_EQ(ok(kFloat16, ReduceOp::Prod, {0x7c00, 0x0000}, 0x7e00), "");
  EXPECT_NE(ok(kFloat16, ReduceOp::Prod, {0x7c00, 0x0000}, 0x7c00), "");
  EXPECT_EQ(ok(kFloat16, ReduceOp::Prod, {0xfc00, 0x3c00}, 0xfc00), "");
  EXPECT_NE(ok(kFloat16, ReduceOp::Prod, {0xfc00, 0x3c00}, 0x7c00), "");
  // A product's sign; an average's one more rounding (float64 (1 + 2) / 2: 1.5 + 1 ulp is
  // within 3u, 2 ulps are not).
  EXPECT_EQ(ok(kFloat32, ReduceOp::Prod, {0xbfc00000, 0x3fc00000}, 0xc0100000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Prod, {0xbfc00000, 0x3fc00000}, 0x40100000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Prod, {0x80000000, 0x3fc00000}, 0x00000000), "");
  EXPECT_EQ(
      ok(kFloat64, ReduceOp::Avg, {0x3ff0000000000000, 0x4000000000000000}, 0x3ff8000000000001),
      "");
  EXPECT_NE(
      ok(kFloat64, ReduceOp::Avg, {0x3ff0000000000000, 0x4000000000000000}, 0x3ff8000000000002),
      "");
  // Min and max: exact, one of the inputs; with a NaN, NaN or not beyond the others' extreme.
  EXPECT_EQ(ok(kFloat32, ReduceOp::Max, {0x80000000, 0x00000000}, 0x80000000), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Max, {0x80000000, 0x00000000}, 0x00000000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Max, {0x00000000, 0x00000000}, 0x80000000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Min, {0x3f800000, 0x40000000}, 0x40000000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Min, {0x3f800000, 0x40000000}, 0x7fc00000), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Min, {0x7fc00001, 0x3f800000, 0x40000000}, 0x7fc00001), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Min, {0x7fc00001, 0x3f800000, 0x40000000}, 0x40000000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Min, {0x7fc00001, 0x40000000, 0x40400000}, 0x3f800000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Max, {0x7fc00001, 0x3f800000, 0x40000000}, 0x40400000), "");
}

}  // namespace
