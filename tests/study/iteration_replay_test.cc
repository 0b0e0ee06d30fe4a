// The layer-pipelined replay: every model with every fusion policy, overlapped and not, ends with
// 0 wrong elements; the trace is Chrome-trace JSON; bad schedule flags are refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

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

TEST(IterationReplay, EveryModelAndPolicyOverlappedOrNotIsExact) {
  const ScratchFile json("replay.json");
  const std::vector<std::string> models{"alexnet", "googlenet", "resnet50"};
  const std::vector<std::string> fusions{"none", "threshold:64M", "buckets:25M", "mgwfbp", "auto"};
  for (const auto& model : models) {
    for (const auto& fusion : fusions) {
      for (const bool overlap : {true, false}) {
        const std::string what = model + " " + fusion + (overlap ? " --overlap" : "");
        std::remove(
            json.path().c_str());  // a run that writes nothing must not pass on the last report
        const auto result =
            run_command(collbench("--ranks-per-node 2 --model-gradients " + model + " --fusion " +
                                  fusion + (overlap ? " --overlap" : "") +
                                  " --compute-scale 0.02 -n 1 -w 0 --json " + json.path()),
                        120);
        EXPECT_EQ(result.exit_code, 0) << what << "\n" << result.output;
        EXPECT_NE(result.output.find("exposed communication"), std::string::npos) << what;
        const auto report = read_json(json.path());
        EXPECT_EQ(report.at("mode"), "iteration-replay") << what;
        EXPECT_EQ(report.at("model"), model);
        EXPECT_EQ(report.at("overlap"), overlap) << what;
        EXPECT_EQ(report.at("wrong"), 0) << what;
        // auto reports the policy it chose; the others report themselves in canonical form.
        if (fusion == "none" || fusion == "mgwfbp") {
          EXPECT_EQ(report.at("fusion"), fusion);
        }
        EXPECT_FALSE(report.at("buckets").empty()) << what;
      }
    }
  }
}

TEST(IterationReplay, TraceIsChromeTraceJsonWithEveryRank) {
  const ScratchFile trace("replay_trace.json");
  const auto result = run_command(
      collbench("--nodes 2 --model-gradients resnet50 --overlap --fusion mgwfbp --per-layer "
                "--compute-scale 0.1 -n 2 -w 1 --trace " +
                trace.path()),
      120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto document = read_json(trace.path());
  EXPECT_EQ(document.at("displayTimeUnit"), "ms");
  std::set<int> pids;
  std::set<std::string> lanes;
  for (const auto& event : document.at("traceEvents")) {
    pids.insert(event.at("pid").get<int>());
    if (event.at("ph") != "X") continue;
    lanes.insert(event.at("cat").get<std::string>());
    EXPECT_GE(event.at("dur").get<double>(), 0) << event.at("name");
  }
  EXPECT_EQ(pids, (std::set<int>{0, 1}));
  EXPECT_EQ(lanes, (std::set<std::string>{"backward", "all-reduce"}));
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
