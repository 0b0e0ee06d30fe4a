// collbench's strategies and modelled modes as a user runs them: --strategy (replayed for real
// too), --model-only, --paper-tables, --scaling (these launch no process).
#include <gtest/gtest.h>

#include "read_json.hpp"
#include "run_command.hpp"
#include "scratch_file.hpp"

namespace {

using coll::testing::read_json;
using coll::testing::run_command;
using coll::testing::ScratchFile;

std::string collbench(const std::string& args) {
  return std::string(COLLBENCH_PATH) + " " + args;
}

TEST(CollbenchModelOnly, StrategyListNamesEverySource) {
  const auto result = run_command(collbench("--strategy list"), 30);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* name : {"cntk\n", "mxnet\n", "tensorflow\n", "caffe-mpi\n", "horovod\n", "ddp\n",
                           "best\n", "docs/strategies.md", "granularity layer"}) {
    EXPECT_NE(result.output.find(name), std::string::npos) << name << result.output;
  }
}

TEST(CollbenchStrategy, EveryStrategyReplaysForRealWithExactResults) {
  // Algorithm, placement (COLL_HIER_INTER, COLL_PS_SERVERS), granularity and overlap of each
  // strategy run on 2 emulated nodes of 2 ranks; compute shortened to keep the test quick.
  for (const char* name : {"cntk", "mxnet", "tensorflow", "caffe-mpi", "horovod", "ddp", "best"}) {
    const ScratchFile json("strategy.json");
    const auto result =
        run_command(collbench(std::string("--model-gradients googlenet --nodes 2 -g 2 -n 1 -w 0 "
                                          "--compute-scale 0.05 --strategy ") +
                              name + " --json " + json.path()),
                    300);
    ASSERT_EQ(result.exit_code, 0) << name << ": " << result.output;
    const auto doc = read_json(json.path());
    EXPECT_EQ(doc["wrong"], 0) << name;
    EXPECT_EQ(doc["overlap"], std::string(name) != "cntk") << name;
  }
}

TEST(CollbenchModelOnly, PaperTablesOnStdoutAndInJson) {
  const ScratchFile json("paper_tables.json");
  const auto result = run_command(collbench("--paper-tables --json " + json.path()), 120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* text : {"preset p40-ib56", "## Table 6", "## Table 7", "| caffe-mpi |",
                           "16 (4x4)", "At 16 GPUs (4 nodes x 4):", "resnet50: best paper-era"}) {
    EXPECT_NE(result.output.find(text), std::string::npos) << text;
  }
  const auto doc = read_json(json.path());
  EXPECT_EQ(doc["mode"], "paper-tables");
  EXPECT_EQ(doc["cells"].size(), 3u * 7 * 5);
  EXPECT_EQ(doc["batch_per"], "gpu");
}

TEST(CollbenchModelOnly, BatchPerNodeSplitsTheBatch) {
  const ScratchFile json("paper_tables_node.json");
  ASSERT_EQ(run_command(collbench("--paper-tables --batch-per node --json " + json.path()), 120)
                .exit_code,
            0);
  for (const auto& cell : read_json(json.path())["cells"]) {
    if (cell["model"] == "alexnet") {
      EXPECT_EQ(cell["batch_per_gpu"], 1024 / cell["ranks_per_node"].get<int>()) << cell;
    }
  }
}

TEST(CollbenchModelOnly, AnIterationOnFourThousandGpus) {
  const ScratchFile json("model_only.json");
  const auto result = run_command(
      collbench("--model-only --nodes 512 --ranks-per-node 8 --model-gradients resnet50 "
                "--strategy best --json " +
                json.path()),
      120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("4096 ranks on 512 nodes"), std::string::npos) << result.output;
  const auto doc = read_json(json.path());
  EXPECT_EQ(doc["ranks"], 4096);
  EXPECT_GT(doc["comm_ms"].get<double>(), 0);
  EXPECT_GE(doc["iteration_ms"].get<double>(),
            doc["forward_ms"].get<double>() + doc["backward_ms"].get<double>());
}

TEST(CollbenchModelOnly, ScalingFrom64To4096Gpus) {
  const ScratchFile json("scaling.json");
  const auto result = run_command(collbench("--scaling --json " + json.path()), 120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("| 4096 GPUs |"), std::string::npos) << result.output;
  const auto doc = read_json(json.path());
  EXPECT_EQ(doc["cells"].size(), 3u * 7 * 7);  // models x strategies x (64 .. 4096)
  for (const auto& cell : doc["cells"]) {
    EXPECT_EQ(cell["ranks_per_node"], 8);
    EXPECT_GT(cell["efficiency"].get<double>(), 0);
    EXPECT_LE(cell["efficiency"].get<double>(), 1.0);
  }
}

TEST(CollbenchModelOnly, PlacementSettingsReachTheModel) {
  auto exposed = [](const std::string& args) {
    const ScratchFile json("placement.json");
    const auto result = run_command(
        collbench("--model-only --nodes 4 -g 4 --model-gradients resnet50 --overlap --json " +
                  json.path() + " " + args),
        60);
    EXPECT_EQ(result.exit_code, 0) << args << result.output;
    return read_json(json.path())["comm_ms"].get<double>();
  };
  const double every_rank = exposed("--algo ps");
  EXPECT_NE(exposed("--algo ps --ps-servers 4"), every_rank);
  EXPECT_NE(exposed("--algo ps --ps-servers 4 --ps-dedicated"),
            exposed("--algo ps --ps-servers 4"));
  EXPECT_LT(exposed("--algo ring -d half"), exposed("--algo ring"));  // 2-byte gradients
  EXPECT_NE(exposed("--cost-preset ethernet-10g --algo ring"),
            exposed("--cost-preset p40-ib56 --algo ring"));
}

TEST(CollbenchModelOnly, ModelledSweepOfEveryAlgorithm) {
  const auto result = run_command(
      collbench("--model-only --nodes 64 -g 8 --cost-preset dgx1-ib100 --algo ring,tree,auto "
                "-b 1K -e 1G -f 1024"),
      30);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("512 ranks on 64 nodes"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("chose "), std::string::npos) << result.output;
}

TEST(CollbenchModelOnly, WhatCannotBeModelledIsRefusedNotIgnored) {
  for (const char* args :
       {"--strategy nosuch --model-gradients resnet50",
        "--strategy ddp --algo ring --model-gradients resnet50", "--batch-per rack --paper-tables",
        "--strategy best", "--cost-preset /nonexistent/p.txt --paper-tables"}) {
    const auto result = run_command(collbench(args), 30);
    EXPECT_NE(result.exit_code, 0) << args;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1)
        << args << ": " << result.output;
  }
  const auto unmodelled = run_command(
      "COLL_HIER_INTER=native_mpi " + collbench("--model-only --nodes 2 -g 2 --algo "
                                                "hierarchical --model-gradients alexnet"),
      30);
  EXPECT_EQ(unmodelled.exit_code, 1) << unmodelled.output;
  EXPECT_NE(unmodelled.output.find("has no cost formula with levels ring / native_mpi"),
            std::string::npos)
      << unmodelled.output;
}

}  // namespace
