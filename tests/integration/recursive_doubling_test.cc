// Recursive doubling carries the argument check in its pairs' first messages instead of a round
// around the ring (algorithms/recursive_doubling.cc): ranks that disagree, on the arguments or
// on the collective itself, still fail with one message naming both calls, not a timeout.
#include <gtest/gtest.h>

#include <string>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;
using coll::testing::says;

std::string launch(const std::string& ranks, const std::string& behaviour) {
  return std::string("COLL_TIMEOUT=30 ") + COLLRUN_PATH + " -np " + ranks + " " +
         RANK_PROGRAM_PATH + " " + behaviour;
}

TEST(RecursiveDoubling, OtherCountsAreNamedByThePairThatMeets) {
  // 2 ranks: one pair; 5: rank 0 folds into rank 1, whose count differs.
  for (const char* ranks : {"2", "5"}) {
    const auto result =
        run_command("COLL_ALGO=recursive_doubling " + launch(ranks, "mismatch"), 60);
    EXPECT_NE(result.exit_code, 0) << result.output;
    // Told apart by the descriptors, not by the sizes of their messages.
    EXPECT_TRUE(says(result, "called allreduce #1 of 101 x float32 sum (recursive_doubling)"))
        << result.output;
    EXPECT_TRUE(says(result, "called allreduce #1 of 100 x float32 sum (recursive_doubling)"))
        << result.output;
    EXPECT_FALSE(says(result, "COLL_TIMEOUT")) << result.output;
  }
}

TEST(RecursiveDoubling, ARankInAnotherCollectiveIsAMismatchNotAHang) {
  // Rank 1's barrier sends its check to rank 2 as a message around the ring; ranks 0, 2 and 3
  // wait for their partners, and a slow wait looks for that message.
  for (const char* ranks : {"3", "4"}) {
    const auto result = run_command(launch(ranks, "barrier-mismatch recursive_doubling"), 60);
    EXPECT_NE(result.exit_code, 0) << result.output;
    EXPECT_TRUE(says(result, "called barrier #1")) << result.output;
    EXPECT_TRUE(says(result, "called allreduce #1 of 1 x uint8 max (recursive_doubling)"))
        << result.output;
    EXPECT_FALSE(says(result, "COLL_TIMEOUT")) << result.output;
  }
}

}  // namespace
