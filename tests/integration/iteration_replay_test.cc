// The layer-pipelined replay: every model with every fusion policy, overlapped and not, ends with
// 0 wrong elements; the trace is Chrome-trace JSON; bad schedule flags are refused.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;

std::string collbench(const std::string& args) {
  return std::string(COLLBENCH_PATH) + " " + args;
}

TEST(IterationReplay, EveryModelAndPolicyOverlappedOrNotIsExact) {
  for (const char* model : {"alexnet", "googlenet", "resnet50"}) {
    for (const char* fusion : {"none", "threshold:64M", "buckets:25M", "mgwfbp", "auto"}) {
      for (const char* overlap : {"--overlap", ""}) {
        const auto result = run_command(
            collbench(std::string("--ranks-per-node 2 --model-gradients ") + model + " --fusion " +
                      fusion + " " + overlap + " --compute-scale 0.02 -n 1 -w 0"),
            120);
        EXPECT_EQ(result.exit_code, 0) << model << " " << fusion << " " << overlap << "\n"
                                       << result.output;
        EXPECT_NE(result.output.find("wrong elements       0\n"), std::string::npos)
            << result.output;
        EXPECT_NE(result.output.find("exposed communication"), std::string::npos);
      }
    }
  }
}

TEST(IterationReplay, TraceIsChromeTraceJsonWithEveryRank) {
  const std::string trace = ::testing::TempDir() + "/replay_trace.json";
  const auto result = run_command(
      collbench("--nodes 2 --model-gradients resnet50 --overlap --fusion mgwfbp --per-layer "
                "--compute-scale 0.1 -n 2 -w 1 --trace " +
                trace),
      120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::ifstream file(trace);
  std::stringstream text;
  text << file.rdbuf();
  const std::string json = text.str();
  EXPECT_EQ(json.rfind("{\"displayTimeUnit\"", 0), 0u) << json.substr(0, 200);
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(json.find("\"pid\":0"), std::string::npos);
  EXPECT_NE(json.find("\"pid\":1"), std::string::npos);
  EXPECT_NE(json.find("all-reduce"), std::string::npos);
  EXPECT_NE(json.find("backward"), std::string::npos);
}

TEST(IterationReplay, BadScheduleFlagsAreOneLineAndExitTwo) {
  for (const char* args : {"--model-gradients resnet50 --fusion threshold:lots",
                           "--model-gradients resnet50 --fusion sometimes",
                           "--model-gradients resnet50 --compute-scale -1", "--overlap"}) {
    const auto result = run_command(collbench(args), 30);
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
  }
}

TEST(IterationReplay, MissingComputeProfileFileIsAClearError) {
  const auto result = run_command(
      collbench("--model-gradients resnet50 --overlap --compute-profile /nonexistent.csv -n 1"),
      60);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("/nonexistent.csv"), std::string::npos) << result.output;
}

}  // namespace
