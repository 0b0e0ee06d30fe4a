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
  for (const char* text :
       {"preset p40-ib56", "## Table 6", "## Table 7", "| caffe-mpi |", "16 (4x4)",
        "At 16 GPUs (4 nodes x 4), `best` against", "- resnet50: "}) {
    EXPECT_NE(result.output.find(text), std::string::npos) << text;
  }
  const auto doc = read_json(json.path());
  EXPECT_EQ(doc["mode"], "paper-tables");
  EXPECT_EQ(doc["cells"].size(), 3u * 7 * 5);
  EXPECT_EQ(doc["batch_per"], "gpu");
}

TEST(CollbenchModelOnly, PaperTablesCloseWithBestAgainstThePaperEraInJsonToo) {
  const ScratchFile json("paper_tables_closing.json");
  ASSERT_EQ(run_command(collbench("--paper-tables --json " + json.path()), 120).exit_code, 0);
  const auto closing = read_json(json.path())["closing"];
  ASSERT_EQ(closing.size(), 3u);
  for (const auto& entry : closing) {
    EXPECT_EQ(entry["paper_era"]["gpus"], 16) << entry;
    EXPECT_EQ(entry["best"]["strategy"], "best") << entry;
    EXPECT_EQ(entry["best"]["variant"], entry["paper_era"]["variant"]) << entry;  // same bytes
    // A ratio only where an exposed time is at least 5 % of its iteration; at per-GPU batches
    // on p40-ib56 all three are below (issue 44: sub-millisecond remainders).
    const bool negligible = entry["paper_era"]["exposed_ms"].get<double>() <
                                0.05 * entry["paper_era"]["iteration_ms"].get<double>() &&
                            entry["best"]["exposed_ms"].get<double>() <
                                0.05 * entry["best"]["iteration_ms"].get<double>();
    EXPECT_EQ(entry["exposed_negligible"].get<bool>(), negligible) << entry;
    if (negligible) {
      EXPECT_TRUE(entry["exposed_ratio"].is_null()) << entry;
    } else {
      EXPECT_DOUBLE_EQ(entry["exposed_ratio"].get<double>(),
                       entry["paper_era"]["exposed_ms"].get<double>() /
                           entry["best"]["exposed_ms"].get<double>());
    }
  }
}

TEST(CollbenchModelOnly, ModelAndStrategySelectTheTablesCells) {
  const ScratchFile tables("paper_tables_selected.json"), scaling("scaling_selected.json");
  const auto result = run_command(
      collbench("--paper-tables --model-gradients alexnet --strategy ddp --json " + tables.path()),
      60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(result.output.find("### googlenet"), std::string::npos) << result.output;
  const auto doc = read_json(tables.path());
  EXPECT_EQ(doc["cells"].size(), 5u);  // 1, 2, 4, 8 and 16 GPUs
  for (const auto& cell : doc["cells"]) {
    EXPECT_EQ(cell["model"], "alexnet");
    EXPECT_EQ(cell["strategy"], "ddp");
  }
  EXPECT_TRUE(doc["closing"].empty());  // it compares every paper-era strategy with best
  ASSERT_EQ(run_command(collbench("--scaling --model-gradients resnet50 --strategy best --json " +
                                  scaling.path()),
                        60)
                .exit_code,
            0);
  EXPECT_EQ(read_json(scaling.path())["cells"].size(), 7u);  // 64 .. 4096 GPUs
  // The preset comes from COLL_COST_PRESET when --cost-preset is not given, as in every mode.
  ASSERT_EQ(run_command("COLL_COST_PRESET=ethernet-10g " +
                            collbench("--paper-tables --model-gradients alexnet --strategy ddp "
                                      "--json " +
                                      tables.path()),
                        60)
                .exit_code,
            0);
  EXPECT_NE(read_json(tables.path())["cost_model"].get<std::string>().find("ethernet-10g"),
            std::string::npos);
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
        "--strategy best", "--cost-preset /nonexistent/p.txt --paper-tables",
        // Flags a modelled mode does not read are refused, not ignored.
        "--paper-tables --algo ring", "--paper-tables --nodes 2", "--paper-tables -d half",
        "--paper-tables --ps-servers 2", "--scaling --nodes 4", "--scaling --fusion layer",
        "--scaling --ranks-per-node 3", "--model-only --coll broadcast", "--model-only --explain",
        "--model-only --calibrate",
        "--model-only --nodes 4 --model-gradients resnet50 --minbytes 1K",
        "--model-gradients resnet50 --batch-per node",
        // Server placement that would not reach the run.
        "--model-only --nodes 2 --algo ring --ps-servers 2",
        "--model-only --nodes 2 --algo ps --ps-dedicated",
        "--model-only --nodes 4 -g 4 --algo ps --ps-servers 100",
        "--model-only --nodes 4 --strategy mxnet --ps-servers 1 --model-gradients resnet50"}) {
    const auto result = run_command(collbench(args), 30);
    EXPECT_NE(result.exit_code, 0) << args;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1)
        << args << ": " << result.output;
  }
  // Refused with `status` and a line containing `text`, under the environment `env`.
  auto expect_refused = [](const std::string& env, const std::string& args, int status,
                           const std::string& text) {
    const auto result = run_command(env + " " + collbench(args), 30);
    EXPECT_EQ(result.exit_code, status) << args << ": " << result.output;
    EXPECT_NE(result.output.find(text), std::string::npos) << args << ": " << result.output;
  };
  expect_refused("COLL_PS_SERVERS=2",
                 "--model-only --nodes 4 --strategy tensorflow --model-gradients resnet50", 2,
                 "COLL_PS_SERVERS=2 conflicts with --strategy tensorflow");
  expect_refused("COLL_HIER_INTER=native_mpi",
                 "--model-only --nodes 2 -g 2 --algo hierarchical --model-gradients alexnet", 1,
                 "has no cost formula with levels ring / native_mpi");
}

}  // namespace
