// collbench as a user runs it: the main job, sweeps, and bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "coll/types.hpp"
#include "coll/version.hpp"
#include "read_json.hpp"
#include "run_command.hpp"
#include "scratch_file.hpp"

namespace {

using coll::testing::count_processes;
using coll::testing::read_json;
using coll::testing::run_command;
using coll::testing::ScratchFile;

std::string collbench(const std::string& args) {
  return std::string(COLLBENCH_PATH) + " " + args;
}

TEST(CollbenchCli, MainJobReplaysGoogLeNetOnFourNodes) {
  const ScratchFile json("googlenet.json");
  const auto result = run_command(
      collbench("--model-gradients googlenet --nodes 4 -n 3 -w 1 --json " + json.path()), 300);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("ms per iteration"), std::string::npos) << result.output;
  const auto report = read_json(json.path());
  EXPECT_EQ(report.at("tool"), "collbench");
  EXPECT_EQ(report.at("mode"), "model-gradients");
  EXPECT_EQ(report.at("model"), "googlenet");
  EXPECT_EQ(report.at("nodes"), 4);
  EXPECT_EQ(report.at("ranks"), 4);
  EXPECT_EQ(report.at("tensors"), 128);
  EXPECT_EQ(report.at("bytes"), 53513120);
  EXPECT_EQ(report.at("wrong"), 0);
  EXPECT_EQ(report.at("checked"), true);
  EXPECT_EQ(report.at("iteration_ms").size(), 3u);
  EXPECT_GT(report.at("median_ms").get<double>(), 0);
}

TEST(CollbenchCli, EveryToolPrintsItsVersion) {
  const std::string version(coll::kVersion);
  std::vector<std::pair<std::string, std::string>> tools{{"collbench", COLLBENCH_PATH},
                                                         {"collrun", COLLRUN_PATH}};
#ifdef COLLTOPO_PATH
  tools.emplace_back("colltopo", COLLTOPO_PATH);
#endif
  for (const auto& [tool, path] : tools) {
    const auto result = run_command(path + " --version", 30);
    EXPECT_EQ(result.exit_code, 0) << tool << ": " << result.output;
    EXPECT_EQ(result.output, tool + " " + version + " (libcoll " + version + ")\n");
  }
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
  const ScratchFile json("sweep.json");
  for (const char* type : {"float", "half", "bfloat16", "int32", "uint8", "double"}) {
    std::remove(json.path().c_str());  // a run that writes nothing must not pass on the last one
    const auto result = run_command(
        collbench(std::string("--nodes 3 -b 4 -e 1M -f 16 -n 2 -w 1 -c 1 -o avg --json ") +
                  json.path() + " -d " + type),
        120);
    EXPECT_EQ(result.exit_code, 0) << result.output;
    const auto report = read_json(json.path());
    EXPECT_EQ(report.at("mode"), "sweep");
    EXPECT_EQ(report.at("type").get<std::string>(), coll::dtype_name(*coll::parse_dtype(type)));
    EXPECT_EQ(report.at("ranks"), 3);
    EXPECT_EQ(report.at("op"), "avg");
    EXPECT_EQ(report.at("rounds"), 1);  // one algorithm: measured once per size
    EXPECT_EQ(report.at("wrong_total"), 0) << type;
    // -b 4 -e 1M -f 16: 4, 64, 1K, 16K and 256K bytes (the smallest rounded to whole elements).
    ASSERT_EQ(report.at("results").size(), 5u) << type;
    for (const auto& row : report.at("results")) {
      EXPECT_LE(row.at("bytes").get<std::size_t>(), std::size_t{1} << 20);
      EXPECT_EQ(row.at("out_of_place").at("wrong"), 0) << type << " " << row.at("bytes");
      EXPECT_EQ(row.at("in_place").at("wrong"), 0) << type << " " << row.at("bytes");
    }
  }
}

TEST(CollbenchCli, BadInputIsOneLineAndExitCodeTwo) {
  for (const char* args :
       {"--nodes 0", "-b 1M -e 1K", "-d complex", "-o xor", "--algo nosuch", "--bogus", "-f 1",
        "-n 0", "--model-gradients vgg", "--model-gradients resnet50 --model-variant x", "-b lots",
        "--node-sizes 3,x", "--node-sizes 0", "--rounds 0", "--rounds 3 --model-gradients alexnet",
        "--rounds 3 --soak 5"}) {
    const auto result = run_command(collbench(args), 30);
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1)
        << args << ": " << result.output;
    EXPECT_EQ(result.output.rfind("collbench: error: ", 0), 0u) << result.output;
  }
}

TEST(CollbenchCli, UnevenNodesForTheHierarchicalAlgorithms) {
  const ScratchFile json("uneven.json");
  const auto result = run_command(
      collbench("--node-sizes 3,2 --algo hierarchical,hierarchical_leader -b 4 -e 1M -f 32 -n 2 "
                "-w 1 --json " +
                json.path()),
      120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto report = read_json(json.path());
  EXPECT_EQ(report.at("ranks"), 5);
  EXPECT_EQ(report.at("nodes"), 2);
  EXPECT_EQ(report.at("wrong_total"), 0);
  // -b 4 -e 1M -f 32: 4, 128, 4K and 128K bytes, for each of the two algorithms.
  std::multiset<std::string> algorithms;
  for (const auto& row : report.at("results")) {
    algorithms.insert(row.at("algorithm").get<std::string>());
    EXPECT_EQ(row.at("out_of_place").at("wrong"), 0) << row;
    EXPECT_EQ(row.at("in_place").at("wrong"), 0) << row;
  }
  EXPECT_EQ(algorithms.count("hierarchical"), 4u);
  EXPECT_EQ(algorithms.count("hierarchical_leader"), 4u);
  EXPECT_EQ(algorithms.size(), 8u);
}

TEST(CollbenchCli, NoProcessOutlivesTheJob) {
  const auto result =
      run_command(collbench("--nodes 2 --ranks-per-node 2 -b 1K -e 1K -n 1 -w 0"), 60);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(count_processes(std::string(COLLBENCH_PATH) + " --nodes 2 --ranks-per-node 2"), 0);
}

}  // namespace
