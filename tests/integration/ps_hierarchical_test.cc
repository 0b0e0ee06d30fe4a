// Parameter server and both hierarchical all-reduces over real rank processes: bit-exact for
// every dtype and op, in and out of place, for counts 0, 1, ranks-1, 7 and 256 Ki + 3, on even,
// uneven and single-node shapes, and with the servers or level algorithms chosen by settings.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "run_command.hpp"

namespace {

using coll::testing::run_command;

struct Case {
  std::string name;
  std::string environment;  // VAR=value ... before collrun
  std::string shape;        // collrun's job shape
  int ranks;
  std::string algorithm;
  bool large = true;  // include the 262147-element count
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class PsHierarchical : public ::testing::TestWithParam<Case> {};

TEST_P(PsHierarchical, BitExactForEveryTypeOpAndCount) {
  const Case& c = GetParam();
  const std::string counts =
      "0 1 " + std::to_string(std::max(c.ranks - 1, 0)) + " 7" + (c.large ? " 262147" : "");
  const auto result = run_command(c.environment + " " + COLLRUN_PATH + " " + c.shape + " " +
                                      RANK_PROGRAM_PATH + " check " + c.algorithm + " " + counts,
                                  120);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("wrong 0"), std::string::npos) << result.output;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  // Parameter server, every rank a server, 1..9 ranks on one node (large count on some).
  for (int ranks = 1; ranks <= 9; ++ranks) {
    all.push_back({"ps_" + std::to_string(ranks) + "ranks", "",
                   "--ranks-per-node " + std::to_string(ranks), ranks, "ps", ranks == 4});
  }
  all.push_back({"ps_2x2", "", "--nodes 2 --ranks-per-node 2", 4, "ps", false});
  all.push_back({"ps_2servers_2x2", "COLL_PS_SERVERS=2", "--nodes 2 --ranks-per-node 2", 4, "ps"});
  all.push_back({"ps_1server_3ranks", "COLL_PS_SERVERS=1", "--ranks-per-node 3", 3, "ps"});
  all.push_back({"ps_3servers_5ranks_small_segments", "COLL_PS_SERVERS=3 COLL_SEGMENT_BYTES=64",
                 "--node-sizes 3,2", 5, "ps", false});
  all.push_back({"ps_dedicated_2of_3x2", "COLL_PS_SERVERS=2 COLL_PS_DEDICATED=1",
                 "--node-sizes 3,2", 5, "ps"});
  all.push_back({"ps_dedicated_1of_3x1", "COLL_PS_SERVERS=1 COLL_PS_DEDICATED=1",
                 "--node-sizes 3,1", 4, "ps", false});

  // Both hierarchical variants on even, uneven, multi-node and single-node shapes.
  const std::pair<const char*, int> shapes[] = {{"--nodes 2 --ranks-per-node 2", 4},
                                                {"--node-sizes 3,2", 5},
                                                {"--node-sizes 1,4", 5},
                                                {"--nodes 3", 3},
                                                {"--ranks-per-node 4", 4},
                                                {"--ranks-per-node 1", 1}};
  for (const char* algorithm : {"hierarchical", "hierarchical_leader"}) {
    for (const auto& [shape, ranks] : shapes) {
      std::string name = std::string(algorithm) + "_" + shape;
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      // One node is the ring's two phases, already covered at the large count elsewhere.
      all.push_back(
          {name, "", shape, ranks, algorithm, std::string(shape) != "--ranks-per-node 4"});
    }
    // Other level algorithms, and segments small enough to pipeline the small counts.
    all.push_back({std::string(algorithm) + "_ps_levels", "COLL_HIER_INTRA=ps COLL_HIER_INTER=ps",
                   "--node-sizes 3,2", 5, algorithm, false});
    // The default inter level is auto (the cost model's composition); ring pinned as well.
    all.push_back({std::string(algorithm) + "_ring_inter", "COLL_HIER_INTER=ring", "--nodes 3", 3,
                   algorithm, false});
    all.push_back({std::string(algorithm) + "_small_segments",
                   "COLL_SEGMENT_BYTES=64 COLL_WINDOW=1", "--node-sizes 2,3", 5, algorithm, false});
    if (coll::find_algorithm("tree") != nullptr) {
      all.push_back({std::string(algorithm) + "_tree_inter", "COLL_HIER_INTER=tree",
                     "--node-sizes 3,2", 5, algorithm, false});
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Shapes, PsHierarchical, ::testing::ValuesIn(cases()),
                         [](const auto& test_case) { return test_case.param.name; });

TEST(PsHierarchicalSettings, BadLevelAlgorithmFailsOnEveryRank) {
  const auto result =
      run_command(std::string("COLL_HIER_INTER=hierarchical ") + COLLRUN_PATH +
                      " --node-sizes 2,1 " + RANK_PROGRAM_PATH + " check hierarchical 0",
                  60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("COLL_HIER_INTER='hierarchical'"), std::string::npos)
      << result.output;
}

}  // namespace
