// The double binary tree, Rabenseifner (halving-doubling) and direct all-reduces over real rank
// processes (direct with the argument check carried in its first message, or, for the
// multi-segment count, as a round of its own): bit-exact for every dtype and op, in and out of
// place, for 1-9 ranks (odd counts, non powers of two), counts 0, 1, ranks-1, 7 and a multi-segment
// one, inside one node, across emulated nodes (TCP) and over uneven nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;

struct Shape {
  std::string name;
  std::string launch;  // collrun options that place the ranks
  int ranks;
  std::string large;  // the largest count: multi-segment for a subset, to keep the run short
  std::string env = "";
};

void PrintTo(const Shape& shape, std::ostream* os) {
  *os << shape.name;
}

std::vector<Shape> shapes() {
  std::vector<Shape> all;
  for (int n = 1; n <= 9; ++n) {
    const bool large = n == 2 || n == 3 || n == 6 || n == 8;
    all.push_back({"1x" + std::to_string(n), "--ranks-per-node " + std::to_string(n), n,
                   large ? "262147" : "1003"});
  }
  all.push_back({"3x2", "--nodes 3 --ranks-per-node 2", 6, "262147"});
  all.push_back({"nodes3and2", "--node-sizes 3,2", 5, "262147"});
  // Many small segments and a narrow window: staging slots reused hundreds of times.
  all.push_back({"1x7_small_segments", "--ranks-per-node 7", 7, "100003",
                 "COLL_SEGMENT_BYTES=4096 COLL_WINDOW=2 "});
  return all;
}

class TreeHalvingDoubling : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(TreeHalvingDoubling, BitExactForEveryTypeOpAndCount) {
  const auto& [algorithm, shape] = GetParam();
  const std::string counts =
      "0 1 " + std::to_string(std::max(shape.ranks - 1, 0)) + " 7 " + shape.large;
  const auto result = run_command(shape.env + COLLRUN_PATH + " " + shape.launch + " " +
                                      RANK_PROGRAM_PATH + " check " + algorithm + " " + counts,
                                  120);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("wrong 0"), std::string::npos) << result.output;
}

INSTANTIATE_TEST_SUITE_P(Shapes, TreeHalvingDoubling,
                         ::testing::Combine(::testing::Values("tree", "halving_doubling", "direct"),
                                            ::testing::ValuesIn(shapes())),
                         [](const auto& test) {
                           return std::get<0>(test.param) + "_" + std::get<1>(test.param).name;
                         });

}  // namespace
