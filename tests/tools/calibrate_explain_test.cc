// collbench's cost-model flags as a user runs them: --calibrate writes the file the library
// reads, --explain names a choice per size, --algo with several algorithms ends in a summary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <utility>

#include "coll/comm.hpp"
#include "coll/model/calibration.hpp"
#include "read_json.hpp"
#include "run_command.hpp"

namespace {

using coll::testing::read_json;
using coll::testing::run_command;

class CostModelCli : public ::testing::Test {
 protected:
  std::string dir = ::testing::TempDir() + "/calibrate_explain_" + std::to_string(::getpid());
  std::string file = dir + "/nested/calibration.txt";
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string collbench(const std::string& args) const {
    return "COLL_CALIBRATION_FILE=" + file + " " + COLLBENCH_PATH + " " + args;
  }
};

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST_F(CostModelCli, CalibrateWritesAFileTheLibraryReads) {
  const auto result = run_command(collbench("--ranks-per-node 2 --calibrate"), 120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("intra measured ranks 0-1"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("saved to " + file), std::string::npos) << result.output;
  const auto calibration = coll::model::load_calibration(file);
  ASSERT_TRUE(calibration);
  EXPECT_EQ(calibration->host, coll::model::this_host());
  EXPECT_GT(calibration->params.intra.beta_s_per_byte, 0);
  EXPECT_GT(calibration->params.gamma_s_per_byte, 0);

  // The next run uses it, and says so.
  const auto explain = run_command(collbench("--ranks-per-node 2 -b 8 -e 8 -n 1 -w 0 --explain"));
  ASSERT_EQ(explain.exit_code, 0) << explain.output;
  EXPECT_NE(explain.output.find("parameters: calibration " + file), std::string::npos)
      << explain.output;
}

TEST_F(CostModelCli, ExplainShowsTheCrossMemoryReadCostTheRanksMeasured) {
  // Ranks of one node time reads of each other's memory when they connect, and `auto` prices
  // peer_read's reads with the cost they agreed on; without cross-memory reads there is none.
  const auto result = run_command(collbench("--ranks-per-node 2 -b 8 -e 8 -n 1 -w 0 --explain"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::smatch found;
  ASSERT_TRUE(
      std::regex_search(result.output, found, std::regex("cross-mem +read +([0-9.]+) us per call")))
      << result.output;
  EXPECT_GT(std::stod(found[1]), 0) << result.output;
  EXPECT_EQ(result.output.find("no NIC shared"), std::string::npos) << result.output;  // one node
  const auto without =
      run_command("COLL_PEER_MEMORY=0 " + collbench("--ranks-per-node 2 -b 8 -e 8 -n 1 --explain"));
  ASSERT_EQ(without.exit_code, 0) << without.output;
  EXPECT_EQ(without.output.find("cross-mem"), std::string::npos) << without.output;
}

TEST_F(CostModelCli, ExplainNamesAWinnerPerSize) {
  const auto result =
      run_command(collbench("--nodes 2 --ranks-per-node 2 -b 8 -e 2M -f 64 -n 1 -w 0 --explain "
                            "--cost-preset p40-cluster"),
                  180);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("preset p40-cluster"), std::string::npos) << result.output;
  EXPECT_EQ(count_of(result.output, "-> choice: "), 4u) << result.output;  // 8, 512, 32K, 2M
  // Its nodes are emulated on this host, over loopback: no NIC for their flows to share.
  for (const char* name : {"ring", "latency", "bandwidth", "reduction", "job: 4 ranks on 2 nodes",
                           "nodes emulated on one host: no NIC shared"}) {
    EXPECT_NE(result.output.find(name), std::string::npos) << name << "\n" << result.output;
  }
  // The explanation comes before the measurements.
  EXPECT_LT(result.output.find("-> choice: "), result.output.find("# collbench allreduce sweep"));
}

TEST_F(CostModelCli, ExplainPricesEmulatedLinksWithACorePerRank) {
  // Twice as many ranks as this host has cores: over its own links the model prices them taking
  // turns on the cores; over links the shaped transport emulates, as the cluster's (a GPU each).
  const long cores = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  const std::string args = "--ranks-per-node " + std::to_string(2 * cores) +
                           " -b 8 -e 8 -n 1 -w 0 --explain --cost-preset p40-ib56";
  const auto here = run_command(collbench(args), 180);
  ASSERT_EQ(here.exit_code, 0) << here.output;
  EXPECT_NE(here.output.find("ranks per core"), std::string::npos) << here.output;
  const auto emulated = run_command(
      "COLL_TRANSPORT=shaped:ucx COLL_SHAPE=intra=1e-6:1e-10,inter=1e-6:1e-10 " + collbench(args),
      180);
  ASSERT_EQ(emulated.exit_code, 0) << emulated.output;
  EXPECT_NE(emulated.output.find("preset p40-ib56"), std::string::npos) << emulated.output;
  EXPECT_EQ(emulated.output.find("ranks per core"), std::string::npos) << emulated.output;
}

TEST_F(CostModelCli, SeveralAlgorithmsEndInASummaryWithPredictions) {
  const std::string json = dir + "/summary.json";
  const auto result = run_command(
      collbench("--nodes 2 -b 1K -e 64K -f 64 -n 2 -w 1 --algo all --cost-preset this-vm "
                "--json " +
                json),
      300);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("# Summary per size"), std::string::npos) << result.output;
  EXPECT_EQ(count_of(result.output, "-> winner: "), 2u) << result.output;
  EXPECT_NE(result.output.find("model's pick matched the measured winner at"), std::string::npos);
  const auto report = read_json(json);
  EXPECT_EQ(report.at("wrong_total"), 0);
  // Several algorithms: each size measured in 5 rounds, one row per (algorithm, size).
  EXPECT_EQ(report.at("rounds"), 5);
  std::set<std::pair<std::string, std::size_t>> rows;
  for (const auto& row : report.at("results")) {
    EXPECT_TRUE(rows.emplace(row.at("algorithm"), row.at("bytes")).second) << row;
  }
  const auto& summary = report.at("summary");
  ASSERT_EQ(summary.size(), 2u) << summary;  // 1K and 64K
  EXPECT_EQ(rows.size(), 2 * summary[0].at("algorithms").size()) << report.at("results");
  for (const auto& size : summary) {
    std::set<std::string> measured, predicted;
    for (const auto& algorithm : size.at("algorithms")) {
      measured.insert(algorithm.at("algorithm").get<std::string>());
      if (algorithm.contains("predicted_us")) {
        predicted.insert(algorithm.at("algorithm").get<std::string>());
      }
    }
    EXPECT_FALSE(predicted.empty()) << size;
    EXPECT_TRUE(measured.count(size.at("winner").get<std::string>())) << size;
    EXPECT_TRUE(predicted.count(size.at("model_pick").get<std::string>())) << size;
  }
}

TEST_F(CostModelCli, EveryRowNamesTheAlgorithmThatRan) {
  // bench/compare.sh reports which algorithm produced libcoll's time from these fields.
  const std::string json = dir + "/ran.json";
  const auto result = run_command(
      collbench("--ranks-per-node 2 -b 8 -e 64K -f 64 -n 2 -w 1 --algo auto,ring --json " + json),
      120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto report = read_json(json);
  const auto names = coll::Comm::algorithms();
  std::map<std::size_t, std::pair<std::string, std::string>> auto_ran;  // bytes -> out, in place
  for (const auto& row : report.at("results")) {
    const std::string ran = row.at("ran"), ran_in_place = row.at("ran_in_place");
    if (row.at("algorithm") == "ring") {
      EXPECT_EQ(ran, "ring") << row;
      EXPECT_EQ(ran_in_place, "ring") << row;
      continue;
    }
    for (const auto& name : {ran, ran_in_place}) {
      EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << row;
      EXPECT_NE(name, "auto") << row;
    }
    auto_ran[row.at("bytes")] = {ran, ran_in_place};
  }
  ASSERT_EQ(auto_ran.size(), 3u) << report.at("results");  // 8, 512, 32K
  for (const auto& size : report.at("summary")) {
    const auto& [ran, ran_in_place] = auto_ran.at(size.at("bytes"));
    EXPECT_EQ(size.at("auto_ran"), ran) << size;
    EXPECT_EQ(size.at("auto_ran_in_place"), ran_in_place) << size;
  }
}

TEST_F(CostModelCli, BadPresetAndMalformedFileFailClearly) {
  const auto preset = run_command(collbench("--cost-preset nosuch"), 30);
  EXPECT_EQ(preset.exit_code, 2) << preset.output;
  EXPECT_NE(preset.output.find("unknown cost preset 'nosuch'"), std::string::npos) << preset.output;
  std::filesystem::create_directories(std::filesystem::path(file).parent_path());
  std::ofstream(file) << "format = libcoll-calibration 1\nbogus\n";
  const auto malformed = run_command(collbench("--ranks-per-node 2 -b 8 -e 8 --explain"), 120);
  EXPECT_NE(malformed.exit_code, 0) << malformed.output;
  EXPECT_NE(malformed.output.find("calibration file " + file + " line 2"), std::string::npos)
      << malformed.output;
}

}  // namespace
