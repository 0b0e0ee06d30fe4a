// COLL_TRANSPORT across processes: an in-process transport cannot join rank processes, and says
// so (the job fails cleanly instead of hanging); an unknown name lists the known ones.
#include <gtest/gtest.h>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;

const std::string kSmallSweep = " --ranks-per-node 2 -b 8 -e 8 -n 1 -w 0 -d float";

TEST(TransportSelection, InprocRefusesRanksInSeveralProcesses) {
  const auto result =
      run_command("COLL_TRANSPORT=inproc " + std::string(COLLBENCH_PATH) + kSmallSweep, 60);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("rank 1: COLL_TRANSPORT=inproc joins only ranks that are threads "
                               "of one process"),
            std::string::npos)
      << result.output;
}

TEST(TransportSelection, UnknownTransportListsTheKnownOnes) {
  const auto result =
      run_command("COLL_TRANSPORT=verbs " + std::string(COLLBENCH_PATH) + kSmallSweep, 60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("unknown transport 'verbs' (COLL_TRANSPORT; known: inproc, ucx, "
                               "shaped:<transport>)"),
            std::string::npos)
      << result.output;
}

}  // namespace
