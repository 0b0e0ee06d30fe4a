// collbench --tune as a user runs it: a small sweep writes the decision table, and the next
// run's `auto` follows the table at every size (collbench --algo all,auto reports what it ran).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "coll/comm.hpp"
#include "coll/model/decision_table.hpp"
#include "coll/model/shape.hpp"
#include "read_json.hpp"
#include "run_command.hpp"

namespace {

using coll::testing::read_json;
using coll::testing::run_command;

class Tune : public ::testing::Test {
 protected:
  std::string dir = ::testing::TempDir() + "/tune_" + std::to_string(::getpid());
  std::string table = dir + "/nested/tuning.txt";
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string collbench(const std::string& args) const {
    return "COLL_TUNING_FILE=" + table + " " + COLLBENCH_PATH + " " + args;
  }
};

TEST_F(Tune, WritesATableThatAutoThenFollows) {
  // Another shape's rules are kept when this shape's are written.
  std::filesystem::create_directories(dir + "/nested");
  std::ofstream(table) << "format = libcoll-tuning 1\n4x1 0 tree\n";
  const auto tune = run_command(
      collbench("--ranks-per-node 2 --tune -b 1K -e 64K -f 8 -n 2 -w 1 --json " + dir + "/t.json"),
      240);
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("saved to " + table), std::string::npos) << tune.output;
  const auto loaded = coll::model::load_decision_table(table, coll::Comm::algorithms());
  ASSERT_TRUE(loaded);
  // collbench's buffers are shared by default: the rules are those for shared buffers, out of
  // place and in place.
  ASSERT_EQ(loaded->rules.count("1x2/shared"), 1u) << loaded->text();
  ASSERT_EQ(loaded->rules.count("1x2/shared/in_place"), 1u) << loaded->text();
  EXPECT_EQ(loaded->rules.count("1x2"), 0u) << loaded->text();
  EXPECT_EQ(loaded->rules.at("4x1").front().algorithm, "tree");

  // Every available algorithm was measured, and the table holds each size's winner: the fastest
  // or one measured within 5 % of it.
  const auto report = read_json(dir + "/t.json");
  const auto shape = coll::model::Shape::uniform(1, 2);
  ASSERT_EQ(report["results"].size(), 3u);
  for (const auto& size : report["results"]) {
    EXPECT_EQ(size["algorithms"].size(), coll::Comm::algorithms().size());
    for (const bool in_place : {false, true}) {
      const std::string median = in_place ? "median_in_place_us" : "median_us";
      const std::string winner_name = in_place ? "winner_in_place" : "winner";
      double best = 1e300, winner = -1;
      for (const auto& algorithm : size["algorithms"]) {
        best = std::min(best, algorithm[median].get<double>());
        if (algorithm["algorithm"] == size[winner_name]) winner = algorithm[median].get<double>();
      }
      EXPECT_GE(winner, best) << size;
      EXPECT_LE(winner, best * 1.05) << size;
      EXPECT_EQ(loaded->find(shape, size["bytes"].get<std::size_t>(), true, in_place)->algorithm,
                size[winner_name]);
    }
  }

  // The next run's auto runs the table's algorithm at every size.
  const auto sweep = run_command(
      collbench("--ranks-per-node 2 --algo ring,auto -b 1K -e 64K -f 8 -n 1 -w 0 --json " + dir +
                "/s.json"),
      240);
  ASSERT_EQ(sweep.exit_code, 0) << sweep.output;
  const auto measured = read_json(dir + "/s.json");
  ASSERT_EQ(measured["summary"].size(), 3u);
  for (const auto& size : measured["summary"]) {
    EXPECT_EQ(size["auto_ran"],
              loaded->find(shape, size["bytes"].get<std::size_t>(), true)->algorithm)
        << "at " << size["bytes"];
    EXPECT_EQ(size["auto_ran_in_place"],
              loaded->find(shape, size["bytes"].get<std::size_t>(), true, true)->algorithm)
        << "at " << size["bytes"];
    EXPECT_TRUE(size.contains("auto_vs_best_pct"));
  }
  EXPECT_NE(sweep.output.find("auto within 10% of the fastest at"), std::string::npos);

  // Tuned with private buffers, the plain rules are written beside the shared ones.
  const auto tune_private = run_command(
      collbench("--ranks-per-node 2 --tune --buffers private --algo ring,direct -b 1K -e 1K -n 2 "
                "-w 1"),
      240);
  ASSERT_EQ(tune_private.exit_code, 0) << tune_private.output;
  const auto both = coll::model::load_decision_table(table, coll::Comm::algorithms());
  ASSERT_TRUE(both);
  EXPECT_EQ(both->rules.count("1x2"), 1u) << both->text();
  EXPECT_EQ(both->rules.count("1x2/shared"), 1u) << both->text();
}

TEST_F(Tune, RanksWhoseBuffersDifferInKindAndChooseDifferentlyFailNamingWhy) {
  // The table sends shared buffers to direct and the others to ring: rank 0's buffers are
  // shared, rank 1's not, so their auto disagrees, and the argument check says why.
  std::filesystem::create_directories(dir + "/nested");
  std::ofstream(table) << "format = libcoll-tuning 1\n1x2 0 ring\n1x2/shared 0 direct\n";
  const auto result = coll::testing::check_algorithm("COLL_TUNING_FILE=" + table, "auto", 1, 2,
                                                     "1000", "check-shared-even");
  EXPECT_NE(result.exit_code, 0) << result.output;
  for (const char* choice : {"sum (direct)", "sum (ring)"}) {
    EXPECT_NE(result.output.find(choice), std::string::npos) << choice << "\n" << result.output;
  }
  EXPECT_NE(result.output.find("some passed buffers from allocate_shared and others not"),
            std::string::npos)
      << result.output;
  // Shared on every rank: they agree.
  const auto agreed = coll::testing::check_algorithm("COLL_TUNING_FILE=" + table, "auto", 1, 2,
                                                     "1000", "check-shared");
  EXPECT_EQ(agreed.exit_code, 0) << agreed.output;
}

TEST_F(Tune, RanksThatDifferInPlaceAndChooseDifferentlyFailNamingWhy) {
  // The table sends calls in place to direct and the others to ring: rank 1 reduces in place,
  // the others not, so their auto disagrees, and the argument check says why.
  std::filesystem::create_directories(dir + "/nested");
  std::ofstream(table) << "format = libcoll-tuning 1\n1x3 0 ring\n1x3/in_place 0 direct\n";
  const auto result = run_command("COLL_TUNING_FILE=" + table + " COLL_TIMEOUT=30 " + COLLRUN_PATH +
                                      " -np 3 " + RANK_PROGRAM_PATH + " in-place-odd",
                                  60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  for (const char* choice : {"sum (direct)", "sum (ring)"}) {
    EXPECT_NE(result.output.find(choice), std::string::npos) << choice << "\n" << result.output;
  }
  EXPECT_NE(result.output.find("some reduced in place and others not"), std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("COLL_TIMEOUT"), std::string::npos) << result.output;
  // In place on every rank: they agree, and run the table's in-place rule, exactly.
  const auto agreed =
      coll::testing::check_algorithm("COLL_TUNING_FILE=" + table, "auto", 1, 3, "1000", "check");
  EXPECT_EQ(agreed.exit_code, 0) << agreed.output;
}

TEST_F(Tune, ABadTableFailsAutoWithTheFileAndLine) {
  std::filesystem::create_directories(dir + "/nested");
  std::ofstream(table) << "format = libcoll-tuning 1\n1x2 0 warp\n";
  const auto result = run_command(collbench("--ranks-per-node 2 -b 8 -e 8 -n 1 -w 0"), 120);
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("tuning file " + table + " line 2: unknown algorithm 'warp'"),
            std::string::npos)
      << result.output;
}

TEST_F(Tune, RefusesToWriteWhenTheTableIsSwitchedOff) {
  const auto result = run_command(
      "COLL_TUNING_FILE=none " + std::string(COLLBENCH_PATH) + " --tune -b 8 -e 8 -n 1 -w 0", 120);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("COLL_TUNING_FILE=none leaves nowhere to write"), std::string::npos)
      << result.output;
}

}  // namespace
