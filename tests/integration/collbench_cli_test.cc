// collbench as a user runs it: the main job, sweeps, and bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "run_command.hpp"

namespace {

using coll::testing::count_processes;
using coll::testing::run_command;

std::string collbench(const std::string& args) {
  return std::string(COLLBENCH_PATH) + " " + args;
}

TEST(CollbenchCli, MainJobReplaysGoogLeNetOnFourNodes) {
  const std::string json = ::testing::TempDir() + "/googlenet.json";
  const auto result =
      run_command(collbench("--model-gradients googlenet --nodes 4 -n 3 -w 1 --json " + json), 300);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("tensors              128\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("bytes                53513120\n"), std::string::npos);
  EXPECT_NE(result.output.find("wrong elements       0\n"), std::string::npos);
  EXPECT_NE(result.output.find("ms per iteration"), std::string::npos);
  std::ifstream file(json);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_NE(text.str().find("\"tensors\":128"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"wrong\":0"), std::string::npos);
}

TEST(CollbenchCli, PerLayerBreakdownListsEveryTensor) {
  const auto result = run_command(
      collbench("--model-gradients alexnet --model-variant torchvision --ranks-per-node 2 -n 2 "
                "-w 0 --per-layer"),
      300);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("features.0"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("classifier.6"), std::string::npos) << result.output;
}

TEST(CollbenchCli, SweepReportsZeroWrongAcrossTypes) {
  for (const char* type : {"float", "half", "bfloat16", "int32", "uint8", "double"}) {
    const auto result = run_command(
        collbench(std::string("--nodes 3 -b 4 -e 1M -f 16 -n 2 -w 1 -c 1 -o avg -d ") + type), 120);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("Out of bounds values : 0 OK"), std::string::npos)
        << result.output;
  }
}

TEST(CollbenchCli, BadInputIsOneLineAndExitCodeTwo) {
  for (const char* args :
       {"--nodes 0", "-b 1M -e 1K", "-d complex", "-o xor", "--algo nosuch", "--bogus", "-f 1",
        "-n 0", "--model-gradients vgg", "--model-gradients resnet50 --model-variant x", "-b lots",
        "--node-sizes 3,x", "--node-sizes 0"}) {
    const auto result = run_command(collbench(args), 30);
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1)
        << args << ": " << result.output;
    EXPECT_EQ(result.output.rfind("collbench: error: ", 0), 0u) << result.output;
  }
}

TEST(CollbenchCli, UnevenNodesForTheHierarchicalAlgorithms) {
  const auto result = run_command(
      collbench("--node-sizes 3,2 --algo hierarchical,hierarchical_leader -b 4 -e 1M -f 32 -n 2 "
                "-w 1"),
      120);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("5 ranks on 2 node(s)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("Out of bounds values : 0 OK"), std::string::npos) << result.output;
}

TEST(CollbenchCli, NoProcessOutlivesTheJob) {
  const auto result =
      run_command(collbench("--nodes 2 --ranks-per-node 2 -b 1K -e 1K -n 1 -w 0"), 60);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(count_processes(std::string(COLLBENCH_PATH) + " --nodes 2 --ranks-per-node 2"), 0);
}

}  // namespace
