// COLL_DEBUG: INFO summarizes each communicator and its transport, TRACE adds every
// collective's algorithm, each line naming its rank; a malformed level is refused clearly.
#include <gtest/gtest.h>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;

const std::string kSmallSweep = " --ranks-per-node 2 -b 8 -e 8 -n 1 -w 0 -d float";

TEST(Logging, TraceNamesTheRankTransportAndEveryAlgorithmChoice) {
  const auto result =
      run_command("COLL_DEBUG=TRACE COLL_ALGO=tree " + std::string(COLLBENCH_PATH) + kSmallSweep);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* expected : {"[coll rank 1] INFO: transport 'auto'",
                               "[coll rank 0] INFO: communicator: 2 ranks on 1 node",
                               "[coll rank 1] TRACE: allreduce #", " x float32 sum with tree"}) {
    EXPECT_NE(result.output.find(expected), std::string::npos) << expected << "\n" << result.output;
  }
}

TEST(Logging, DefaultLevelIsQuiet) {
  const auto result = run_command(std::string(COLLBENCH_PATH) + kSmallSweep);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.find("[coll rank"), std::string::npos) << result.output;
}

TEST(Logging, MalformedLevelIsRefused) {
  const auto result = run_command("COLL_DEBUG=LOUD " + std::string(COLLBENCH_PATH) + kSmallSweep);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("COLL_DEBUG='LOUD' is not one of WARN, INFO, TRACE"),
            std::string::npos)
      << result.output;
}

}  // namespace
