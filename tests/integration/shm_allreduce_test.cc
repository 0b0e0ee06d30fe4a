// The shm all-reduce over real rank processes: ranks of one node hand each other their vectors
// through the node's shared-memory slots, bit-exact for every dtype and op, in and out of place,
// for counts that fit one slot and counts that take many rounds; across emulated nodes, or with
// COLL_NODE_SLOTS=0, it runs direct and stays exact. A rank that calls something else, or stops,
// is named on the others instead of leaving them waiting in the slots.
#include <gtest/gtest.h>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;
using coll::testing::says;

// 1048579 floats: 65 slot rounds, the last one partial.
coll::testing::CommandResult check_shm(const std::string& environment, int nodes,
                                       int ranks_per_node) {
  return coll::testing::check_algorithm(environment, "shm", nodes, ranks_per_node, "16384 1048579");
}

TEST(ShmAllreduce, RanksOfOneNodeHandOffThroughSlots) {
  for (const int ranks : {2, 3, 5}) {
    const auto result = check_shm("", 1, ranks);
    EXPECT_EQ(result.exit_code, 0) << ranks << " ranks:\n" << result.output;
    EXPECT_TRUE(says(result, "wrong 0")) << result.output;
    EXPECT_TRUE(says(result, "node slots")) << result.output;
  }
}

TEST(ShmAllreduce, WithoutSlotsRunsDirectExactly) {
  const auto result = check_shm("COLL_NODE_SLOTS=0", 1, 3);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(says(result, "wrong 0")) << result.output;
  EXPECT_FALSE(says(result, "node slots")) << result.output;
}

TEST(ShmAllreduce, AcrossEmulatedNodesRunsDirectExactly) {
  const auto result = check_shm("", 2, 2);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(says(result, "wrong 0")) << result.output;
}

TEST(ShmAllreduce, ARankRunningAnotherAlgorithmIsAMismatchNotAHang) {
  // Ranks 0 and 2 wait in the slots; rank 1's barrier sends its check to rank 2 as a message.
  const auto result = run_command(std::string("COLL_TIMEOUT=30 ") + COLLRUN_PATH + " -np 3 " +
                                      RANK_PROGRAM_PATH + " barrier-mismatch shm",
                                  60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(says(result, "called barrier #1")) << result.output;
  EXPECT_TRUE(says(result, "called allreduce #1 of 1 x uint8 max (shm)")) << result.output;
  EXPECT_FALSE(says(result, "COLL_TIMEOUT")) << result.output;
}

TEST(ShmAllreduce, OtherCountsFailEveryRankEvenWithoutTheArgumentCheck) {
  // 100 and 101 floats take one slot round each: unchecked, rank 1 would add a stale float.
  const auto result = run_command(std::string("COLL_CHECK_ARGS=0 COLL_TIMEOUT=30 ") + COLLRUN_PATH +
                                      " -np 3 " + RANK_PROGRAM_PATH + " mismatch shm",
                                  60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  for (const char* rank : {"[rank 0]", "[rank 1]", "[rank 2]"}) {
    EXPECT_TRUE(says(result, std::string(rank) + " rank_program: rank ")) << rank << result.output;
  }
  EXPECT_TRUE(says(result, "different size than the")) << result.output;
  EXPECT_FALSE(says(result, "COLL_TIMEOUT")) << result.output;
}

TEST(ShmAllreduce, StoppedRankIsNamedWithinTheTimeout) {
  const auto result = run_command(std::string("COLL_ALGO=shm COLL_TIMEOUT=2 COLL_LAUNCH_GRACE=1 ") +
                                      COLLRUN_PATH + " -np 3 " + RANK_PROGRAM_PATH + " stall 2 5",
                                  60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(says(result, "rank 2 stalled")) << result.output;
  EXPECT_TRUE(says(result, "(shm): no progress receiving from rank 2")) << result.output;
}

TEST(ShmAllreduce, KilledRankEndsTheJobOnEveryRank) {
  const auto result = run_command(std::string("COLL_ALGO=shm COLL_TIMEOUT=20 ") + COLLRUN_PATH +
                                      " -np 3 " + RANK_PROGRAM_PATH + " die 1 5",
                                  60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(says(result, "rank 1 was killed by signal 9")) << result.output;
  EXPECT_FALSE(says(result, "COLL_TIMEOUT")) << result.output;
}

}  // namespace
