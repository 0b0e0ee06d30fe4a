// Broadcast, reduce, all-gather and reduce-scatter over real rank processes: bit-exact for every
// dtype, op and root, in and out of place, at 1-9 ranks (shared memory and TCP between emulated
// nodes) and counts 0, 1, 7, ranks-1 and a large non-divisible one; then split and abort.
#include <gtest/gtest.h>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;

std::string collrun(const std::string& shape, const std::string& behaviour) {
  return std::string(COLLRUN_PATH) + " " + shape + " " + COLLECTIVES_PROGRAM_PATH + " " + behaviour;
}

class Collectives : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(Collectives, BitExactForEveryCollectiveTypeOpRootAndCount) {
  const auto [nodes, ranks_per_node] = GetParam();
  const int ranks = nodes * ranks_per_node;
  const std::string counts = "0 1 7 " + std::to_string(std::max(ranks - 1, 0)) + " 262147";
  const auto result = run_command(collrun("--nodes " + std::to_string(nodes) +
                                              " --ranks-per-node " + std::to_string(ranks_per_node),
                                          "check " + counts),
                                  300);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (int rank = 0; rank < ranks; ++rank) {
    EXPECT_NE(result.output.find("rank " + std::to_string(rank) + ": wrong 0"), std::string::npos)
        << result.output;
  }
}

// (nodes, ranks per node).
INSTANTIATE_TEST_SUITE_P(Shapes, Collectives,
                         ::testing::Values(std::tuple{1, 1}, std::tuple{1, 2}, std::tuple{3, 1},
                                           std::tuple{2, 2}, std::tuple{1, 5}, std::tuple{4, 2},
                                           std::tuple{3, 3}),
                         [](const auto& shape) {
                           return std::to_string(std::get<0>(shape.param)) + "x" +
                                  std::to_string(std::get<1>(shape.param));
                         });

TEST(CommSplit, SubCommunicatorsByColorAndKeyWorkBesideTheirParent) {
  for (const char* shape : {"--ranks-per-node 1", "--ranks-per-node 2",
                            "--nodes 2 --ranks-per-node 2", "--ranks-per-node 5"}) {
    const auto result = run_command(collrun(shape, "split"), 120);
    EXPECT_EQ(result.exit_code, 0) << shape << ": " << result.output;
    EXPECT_EQ(result.output.find("wrong 1"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("rank 0: wrong 0"), std::string::npos) << result.output;
  }
}

TEST(CommAbort, AnotherThreadFailsTheWaitingCollectivePromptly) {
  const auto result = run_command("COLL_TIMEOUT=30 " + collrun("--ranks-per-node 2", "abort"), 60);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("the communicator was aborted"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("then: rank 0: communicator unusable"), std::string::npos)
      << result.output;
}

TEST(CollectiveArguments, RanksCallingDifferentCollectivesOrRootsFailNamingBoth) {
  const auto kind =
      run_command("COLL_TIMEOUT=20 " + collrun("--ranks-per-node 2", "mismatch kind"), 60);
  EXPECT_NE(kind.exit_code, 0) << kind.output;
  EXPECT_NE(kind.output.find("allgather #1 of 64 x float32"), std::string::npos) << kind.output;
  EXPECT_NE(kind.output.find("broadcast #1 of 64 x float32 with root 0"), std::string::npos)
      << kind.output;
  const auto root =
      run_command("COLL_TIMEOUT=20 " + collrun("--ranks-per-node 3", "mismatch root"), 60);
  EXPECT_NE(root.exit_code, 0) << root.output;
  EXPECT_NE(root.output.find("with root 1"), std::string::npos) << root.output;
  EXPECT_NE(root.output.find("passed different arguments"), std::string::npos) << root.output;
}

// The direct all-reduce carries the check in its data message: a rank running it among ranks
// that broadcast still compares descriptors with both neighbours instead of waiting for data.
TEST(CollectiveArguments, CarriedCheckMeetsACheckOfItsOwn) {
  const auto result =
      run_command("COLL_TIMEOUT=20 " + collrun("--ranks-per-node 3", "mismatch allreduce"), 60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("allreduce #1 of 64 x float32 sum (direct)"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("broadcast #1 of 64 x float32 with root 0"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("the ranks issued their collectives in different orders"),
            std::string::npos)
      << result.output;
}

}  // namespace
