// The launcher exits as soon as its ranks are gone, even when something they left behind holds
// their output pipes open.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "coll/clock.hpp"
#include "run_command.hpp"

namespace {

TEST(LauncherExit, DoesNotWaitForPipesHeldByARanksChild) {
  const double start = coll::now_seconds();
  // Each rank leaves a sleeping child holding its stderr, prints the child's pid, and exits
  // after an unterminated line.
  const auto result =
      coll::testing::run_command(std::string(COLLRUN_PATH) +
                                     " --ranks-per-node 2 -- /bin/sh -c 'sleep 30 >/dev/null & "
                                     "echo \"left $!\"; printf partial >&2'",
                                 60);
  const double elapsed = coll::now_seconds() - start;
  for (std::size_t at = 0; (at = result.output.find("left ", at)) != std::string::npos; ++at) {
    ::kill(std::stoi(result.output.substr(at + 5)), SIGKILL);
  }
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_LT(elapsed, 10) << result.output;
  EXPECT_NE(result.output.find("[rank 1] left "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("[rank 1] partial"), std::string::npos) << result.output;
}

}  // namespace
