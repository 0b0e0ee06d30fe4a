// The ring all-reduce over real rank processes: bit-exact for every dtype and op, in and out of
// place, for rank counts 1-8 and counts 0, 1, 7, ranks-1 and 1 Mi + 3.
#include <gtest/gtest.h>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;

class RingAllreduce : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(RingAllreduce, BitExactForEveryTypeOpAndCount) {
  const auto [nodes, ranks_per_node] = GetParam();
  const int ranks = nodes * ranks_per_node;
  const std::string counts = "0 1 7 " + std::to_string(std::max(ranks - 1, 0)) + " 1048579";
  const auto result = run_command(std::string(COLLRUN_PATH) + " --nodes " + std::to_string(nodes) +
                                      " --ranks-per-node " + std::to_string(ranks_per_node) + " " +
                                      RANK_PROGRAM_PATH + " check ring " + counts,
                                  300);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("wrong 0"), std::string::npos) << result.output;
}

// (nodes, ranks per node): shared memory inside a node, TCP between emulated nodes.
INSTANTIATE_TEST_SUITE_P(Shapes, RingAllreduce,
                         ::testing::Values(std::tuple{1, 1}, std::tuple{1, 2}, std::tuple{3, 1},
                                           std::tuple{2, 2}, std::tuple{1, 5}, std::tuple{4, 2}),
                         [](const auto& shape) {
                           return std::to_string(std::get<0>(shape.param)) + "x" +
                                  std::to_string(std::get<1>(shape.param));
                         });

}  // namespace
