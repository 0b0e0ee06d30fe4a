// collbench --soak: a short soak of random operations over shared memory and TCP comes out clean
// and plateaued, is reproducible from its seed, and refuses flags it would ignore.
#include <gtest/gtest.h>

#include "read_json.hpp"
#include "run_command.hpp"
#include "scratch_file.hpp"

namespace {

using coll::testing::read_json;
using coll::testing::run_command;
using coll::testing::ScratchFile;

TEST(Soak, ShortSoakAcrossTwoNodesIsExactAndPlateaus) {
  const ScratchFile json("soak.json");
  const auto result = run_command(std::string(COLLBENCH_PATH) +
                                      " --nodes 2 --ranks-per-node 2 --soak 300 --seed 11 "
                                      "-e 256K --json " +
                                      json.path(),
                                  240);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("# soak: PASS (seed 11)"), std::string::npos) << result.output;
  const auto report = read_json(json.path());
  EXPECT_EQ(report["mode"], "soak");
  EXPECT_EQ(report["ranks"], 4);
  EXPECT_EQ(report["nodes"], 2);
  EXPECT_EQ(report["ops"], 300);
  EXPECT_GT(report["calls"].get<int>(), 300);  // queued and fused operations make several
  EXPECT_EQ(report["wrong"], 0);
  EXPECT_EQ(report["overwritten_guards"], 0);
  EXPECT_EQ(report["modified_inputs"], 0);
  EXPECT_EQ(report["verdict"], "pass");
  ASSERT_EQ(report["samples"].size(), 20u);
  EXPECT_EQ(report["samples"].back()["ops"], 300);
  for (const auto& sample : report["samples"]) EXPECT_GT(sample["rss_mib_max"].get<double>(), 1.0);
  EXPECT_LE(report["rss_growth_mib"].get<double>(), report["rss_growth_allowed_mib"].get<double>());
}

TEST(Soak, TheSameSeedRunsTheSameOperations) {
  std::vector<nlohmann::json> reports;
  for (const char* seed : {"5", "5", "6"}) {
    const ScratchFile json("soak_seed.json");  // removed after each run: none reads an old one
    const auto result = run_command(std::string(COLLBENCH_PATH) + " -g 3 --soak 40 --seed " + seed +
                                        " -e 64K --algo ring,tree --json " + json.path(),
                                    120);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    reports.push_back(read_json(json.path()));
  }
  auto calls = [](const nlohmann::json& report) {
    std::vector<int> per_sample;
    for (const auto& sample : report["samples"]) per_sample.push_back(sample["calls"]);
    return per_sample;
  };
  EXPECT_EQ(calls(reports[0]), calls(reports[1]));
  EXPECT_NE(calls(reports[0]), calls(reports[2]));
  EXPECT_EQ(reports[0]["algorithms"], "ring,tree");
}

TEST(Soak, FlagsItWouldIgnoreAreUsageErrors) {
  for (const std::string flags :
       {"--soak 10 -d int8", "--soak 10 --coll broadcast", "--soak 0", "--seed 3"}) {
    const auto result = run_command(std::string(COLLBENCH_PATH) + " " + flags, 30);
    EXPECT_EQ(result.exit_code, 2) << flags << ": " << result.output;
    EXPECT_NE(result.output.find("collbench: error: "), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find('\n'), result.output.size() - 1) << result.output;
  }
}

}  // namespace
