// The launcher's verdict on a failed job: which rank stalled, from the ranks' published waits
// and their process states.
#include "coll/tools/stall_diagnosis.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap/wait_record.hpp"

namespace coll::tools {
namespace {

std::vector<RankWaitState> waits(std::vector<std::optional<int>> waits_on) {
  std::vector<RankWaitState> ranks(waits_on.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r].waits_on = waits_on[r];
  return ranks;
}

TEST(StallDiagnosis, FollowsTheWaitsToTheRankWaitingOnNoOne) {
  // 0 timed out waiting for 1, which waits for 3, which waits on no one.
  const auto verdict = find_stalled_rank(0, waits({1, 3, 3, std::nullopt}));
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->rfind("rank 3 stalled: it is waiting on no other rank; ranks 1, 2 waited", 0),
            0u)
      << *verdict;
}

TEST(StallDiagnosis, AStoppedProcessIsTheStalledRankWhateverTheWaits) {
  auto ranks = waits({2, 0, 1, 1});  // a stale record on the stopped rank makes a cycle
  ranks[2].stopped = true;
  const auto verdict = find_stalled_rank(1, ranks);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->rfind("rank 2 stalled: its process is stopped; rank 0 waited for it", 0), 0u)
      << *verdict;
}

TEST(StallDiagnosis, AStoppedProcessThatExitedIsNotBlamed) {
  auto ranks = waits({1, std::nullopt, std::nullopt});
  ranks[2].stopped = true;
  ranks[2].running = false;
  const auto verdict = find_stalled_rank(0, ranks);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->rfind("rank 1 stalled", 0), 0u) << *verdict;
}

TEST(StallDiagnosis, NoVerdictWhenTheFailedRankWaitedOnNoOne) {
  auto ranks = waits({std::nullopt, 0, 0});  // rank 0 failed on its own (a mismatch, a crash)
  EXPECT_FALSE(find_stalled_rank(0, ranks));
  EXPECT_FALSE(find_stalled_rank(7, ranks));
}

TEST(StallDiagnosis, AStoppedProcessIsNamedWhenTheFailedRankWaitedInTheStore) {
  auto ranks = waits({std::nullopt, std::nullopt, std::nullopt});  // timed out joining the job
  ranks[1].stopped = true;
  const auto verdict = find_stalled_rank(0, ranks);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(*verdict, "rank 1 stalled: its process is stopped");
}

TEST(StallDiagnosis, ACycleOfWaitsSaysTheRanksAreInDifferentCollectives) {
  const auto verdict = find_stalled_rank(0, waits({1, 2, 1}));
  ASSERT_TRUE(verdict);
  EXPECT_NE(verdict->find("cycle (1 -> 2 -> 1)"), std::string::npos) << *verdict;
}

TEST(StallDiagnosis, ARecordNamingNoRankIsIgnored) {
  EXPECT_FALSE(find_stalled_rank(0, waits({5, std::nullopt})));
}

TEST(StallDiagnosis, ReadsTheStoppedStateFromProc) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  EXPECT_FALSE(process_is_stopped(child));
  ::kill(child, SIGSTOP);
  int status = 0;
  ::waitpid(child, &status, WUNTRACED);
  EXPECT_TRUE(process_is_stopped(child));
  ::kill(child, SIGKILL);
  ::waitpid(child, &status, 0);
}

TEST(WaitRecord, CarriesThePeerAndNothingElseParses) {
  EXPECT_EQ(waited_peer(wait_record(12, false)), 12);
  EXPECT_EQ(waited_peer(wait_record(0, true)), 0);
  EXPECT_EQ(wait_key(3), "wait/3");
  for (const char* bad : {"", "-1 receiving from", "x", "2x", " 2"}) {
    EXPECT_FALSE(waited_peer(bad)) << bad;
  }
}

}  // namespace
}  // namespace coll::tools
