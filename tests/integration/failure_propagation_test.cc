// After a failure every rank must stop promptly with a message naming the cause: a stopped rank
// is named by the launcher's summary and cleaned up within one COLL_TIMEOUT, a mismatch found by
// one rank reaches every rank at once, and communicators survive the failures around them
// (docs/reliability.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <sstream>

#include "coll/clock.hpp"
#include "run_command.hpp"

namespace {

using coll::testing::count_processes;
using coll::testing::run_command;

std::string collrun(const std::string& env, int ranks, const std::string& program,
                    const std::string& behaviour) {
  return env + " " + COLLRUN_PATH + " --ranks-per-node " + std::to_string(ranks) + " " + program +
         " " + behaviour;
}

// The first line rank `rank` printed starting with `prefix` and its rank (the launcher prefixes
// "[rank r] " to every line but rank 0's standard output), or "".
// The first line `rank` printed that starts with `text` (rank 0's lines may come unprefixed).
std::string line_starting(const std::string& output, int rank, const std::string& text) {
  const std::string forwarded = "[rank " + std::to_string(rank) + "] " + text;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(forwarded, 0) == 0 || (rank == 0 && line.rfind(text, 0) == 0)) return line;
  }
  return "";
}

std::string line_of(const std::string& output, int rank, const std::string& prefix) {
  return line_starting(output, rank, prefix + std::to_string(rank));
}

TEST(FailurePropagation, StoppedRankIsNamedAndTheJobEndsWithinOneTimeout) {
  constexpr double kTimeout = 4, kGrace = 1;
  const auto result = run_command(
      collrun("COLL_TIMEOUT=4 COLL_LAUNCH_GRACE=1", 4, RANK_PROGRAM_PATH, "stop 2 5"), 60);
  const double ended = coll::now_seconds();
  EXPECT_NE(result.exit_code, 0);
  std::smatch stop;
  ASSERT_TRUE(std::regex_search(result.output, stop, std::regex("rank 2 stops at ([0-9.]+)")))
      << result.output;
  const double stopped_for = ended - std::stod(stop[1]);
  EXPECT_LE(stopped_for, kTimeout + kGrace + 2) << result.output;
  EXPECT_NE(result.output.find("launcher: job failed: rank 2 stalled: its process is stopped"),
            std::string::npos)
      << result.output;
  EXPECT_EQ(count_processes(std::string(RANK_PROGRAM_PATH) + " stop 2 5"), 0);
}

// Runs `behaviour` on `ranks` ranks with COLL_TIMEOUT=2, expects the job to fail with
// `summary` at the start of the launcher's verdict and no process left; returns how long it took.
double expect_stall_named(int ranks, const std::string& behaviour, const std::string& summary) {
  const double started = coll::now_seconds();
  const auto result = run_command(
      collrun("COLL_TIMEOUT=2 COLL_LAUNCH_GRACE=1", ranks, RANK_PROGRAM_PATH, behaviour), 60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("launcher: job failed: " + summary), std::string::npos)
      << result.output;
  EXPECT_EQ(count_processes(std::string(RANK_PROGRAM_PATH) + " " + behaviour), 0);
  return coll::now_seconds() - started;
}

TEST(FailurePropagation, RankStoppedAfterTheLastCollectiveIsNamedAndKilled) {
  // The others finish (their closing barrier times out) and exit 0: no rank is left to fail.
  EXPECT_LT(expect_stall_named(3, "stop-at-end 1", "rank 1 stalled: its process is stopped"), 20);
}

TEST(FailurePropagation, RankStuckOutsideTheLibraryIsNamed) {
  expect_stall_named(4, "stall 3 4", "rank 3 stalled: it is waiting on no other rank");
}

TEST(FailurePropagation, MismatchReachesEveryRankAtOnceWithOneMessage) {
  // Rank 1 passes 101 elements: only ranks 1 and 2 see it in the argument check; the others
  // must hear it from them instead of waiting out COLL_TIMEOUT.
  const double started = coll::now_seconds();
  const auto result = run_command(collrun("COLL_TIMEOUT=30", 5, RANK_PROGRAM_PATH, "mismatch"), 60);
  EXPECT_LT(coll::now_seconds() - started, 10) << result.output;
  EXPECT_NE(result.exit_code, 0);
  // Ranks 1 and 2 both find it; whichever posts first, every rank reports that one.
  const std::regex cause("(rank \\d called allreduce #1 of 10[01] x .* but rank \\d called .*)$");
  std::string first_cause;
  for (int rank = 0; rank < 5; ++rank) {
    // A rank still creating its communicator when the news arrives fails there, before any
    // collective, with the same cause.
    std::string line = line_of(result.output, rank, "rank_program: rank ");
    if (line.empty()) line = line_starting(result.output, rank, "rank_program: job aborted: ");
    std::smatch found;
    ASSERT_TRUE(std::regex_search(line, found, cause)) << "rank " << rank << ":\n" << result.output;
    if (rank == 0) first_cause = found[1];
    EXPECT_EQ(found[1], first_cause) << result.output;
  }
  EXPECT_NE(first_cause.find("of 100 x float32 sum"), std::string::npos) << first_cause;
  EXPECT_NE(first_cause.find("of 101 x float32 sum"), std::string::npos) << first_cause;
}

TEST(FailurePropagation, BarrierAgainstAOneByteMaxAllreduceIsAMismatch) {
  const auto result =
      run_command(collrun("COLL_TIMEOUT=20", 3, RANK_PROGRAM_PATH, "barrier-mismatch"), 60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("called barrier #1"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("called allreduce #1 of 1 x uint8 max (ring)"), std::string::npos)
      << result.output;
}

TEST(FailurePropagation, HugeCountsAreRefusedUpFrontOnEveryRankCount) {
  for (int ranks : {1, 3}) {
    const auto result = run_command(collrun("", ranks, RANK_PROGRAM_PATH, "huge-count"), 60);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    for (int rank = 0; rank < ranks; ++rank) {
      EXPECT_NE(line_of(result.output, rank, "rank ").find("huge counts refused"),
                std::string::npos)
          << result.output;
    }
  }
}

TEST(Lifecycle, CreateDestroyCreateInOneProcess) {
  const auto result = run_command(collrun("", 3, LIFECYCLE_PROGRAM_PATH, "recreate"), 60);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(line_of(result.output, rank, "rank ").find("recreate ok"), std::string::npos)
        << result.output;
  }
}

TEST(Lifecycle, DestroyAfterAFailureWithMessagesInFlightReturnsCleanly) {
  const auto result = run_command(
      collrun("COLL_CHECK_ARGS=0 COLL_TIMEOUT=3", 2, LIFECYCLE_PROGRAM_PATH, "destroy-failed"), 60);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(line_of(result.output, rank, "rank ").find("destroy-failed ok"), std::string::npos)
        << result.output;
  }
  for (const char* symptom : {"mpool", "Assertion", "signal", "leak"}) {
    EXPECT_EQ(result.output.find(symptom), std::string::npos) << symptom << ":\n" << result.output;
  }
}

TEST(Lifecycle, AbortFromAnotherThreadEndsABlockedCollective) {
  const auto result =
      run_command(collrun("COLL_TIMEOUT=30", 2, LIFECYCLE_PROGRAM_PATH, "abort-thread"), 60);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("rank 0: abort-thread ok"), std::string::npos) << result.output;
  std::smatch after;
  ASSERT_TRUE(
      std::regex_search(result.output, after, std::regex("([0-9.]+) s after collCommAbort")))
      << result.output;
  EXPECT_LT(std::stod(after[1]), 1.0) << result.output;
}

}  // namespace
