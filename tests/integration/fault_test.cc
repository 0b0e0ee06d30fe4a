// Failures must become clear errors on every surviving rank, never hangs or orphans.
#include <gtest/gtest.h>

#include "bootstrap/store_server.hpp"
#include "coll/comm.hpp"
#include "run_command.hpp"

namespace {

using coll::testing::count_processes;
using coll::testing::run_command;

std::string launch(const std::string& env, int ranks, const std::string& behaviour) {
  return env + " " + COLLRUN_PATH + " --ranks-per-node " + std::to_string(ranks) + " " +
         RANK_PROGRAM_PATH + " " + behaviour;
}

TEST(Faults, KilledRankBecomesAnErrorNamingItOnEveryOtherRank) {
  const auto result = run_command(launch("COLL_TIMEOUT=20", 4, "die 2 5"), 60);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("rank 2 was killed by signal 9"), std::string::npos)
      << result.output;
  for (int survivor : {0, 1, 3}) {
    const std::string prefix = "rank_program: rank " + std::to_string(survivor) + ": ";
    const auto line = result.output.find(prefix);
    ASSERT_NE(line, std::string::npos) << "rank " << survivor << " did not report:\n"
                                       << result.output;
    const auto end = result.output.find('\n', line);
    EXPECT_NE(result.output.substr(line, end - line).find("rank 2"), std::string::npos)
        << result.output;
  }
  EXPECT_EQ(count_processes("rank_program die 2 5"), 0);
}

TEST(Faults, KilledRankAcrossEmulatedNodes) {
  const auto result = run_command("COLL_TIMEOUT=20 " + std::string(COLLRUN_PATH) + " --nodes 3 " +
                                      RANK_PROGRAM_PATH + " die 1 3",
                                  60);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("rank 1 was killed by signal 9"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("[rank 0] rank_program: rank 0: "), std::string::npos)
      << result.output;
  EXPECT_EQ(count_processes("rank_program die 1 3"), 0);
}

TEST(Faults, StalledRankTimesOutNamingIt) {
  const auto result = run_command(launch("COLL_TIMEOUT=2 COLL_LAUNCH_GRACE=2", 3, "stall 1 4"), 60);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("COLL_TIMEOUT"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("rank 1"), std::string::npos) << result.output;
  EXPECT_EQ(count_processes("rank_program stall 1 4"), 0);
}

TEST(Faults, RankThatNeverJoinsIsNamed) {
  const auto result = run_command(launch("COLL_TIMEOUT=2 COLL_LAUNCH_GRACE=1", 3, "late 2 30"), 60);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("waiting for rank 2 to join"), std::string::npos) << result.output;
  EXPECT_EQ(count_processes("rank_program late 2 30"), 0);
}

TEST(Faults, MismatchedCountsFailLoudly) {
  const auto result = run_command(launch("COLL_TIMEOUT=10", 2, "mismatch"), 60);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("of 101 x float32 sum"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("of 100 x float32 sum"), std::string::npos) << result.output;
}

TEST(Faults, WrongTokenIsRefused) {
  coll::StoreServer store("127.0.0.1", 0, coll::make_job_token());
  try {
    coll::Comm::from_store(store.address(), "not-the-token", 0, 1);
    FAIL() << "a client with the wrong token was accepted";
  } catch (const coll::Error& error) {
    EXPECT_NE(std::string(error.what()).find("wrong job token"), std::string::npos) << error.what();
  }
}

TEST(Faults, EnvironmentContractErrorsNameTheVariables) {
  const auto result =
      run_command("COLL_RANK=0 " + std::string(RANK_PROGRAM_PATH) + " check ring 1", 30);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("COLL_STORE"), std::string::npos) << result.output;
}

}  // namespace
