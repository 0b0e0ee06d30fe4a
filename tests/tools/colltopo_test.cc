// colltopo as a user runs it: emulated nodes under the local launcher, --measure, the hwloc
// fixtures, a corrupt fixture, mpirun, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "read_json.hpp"
#include "run_command.hpp"
#include "scratch_file.hpp"

#ifdef COLLTOPO_PATH

namespace {

using coll::testing::read_json;
using coll::testing::run_command;
using coll::testing::ScratchFile;

std::string colltopo(const std::string& args) {
  return std::string(COLLTOPO_PATH) + " " + args;
}

std::string fixture(const std::string& name) {
  return std::string(COLL_SOURCE_DIR) + "/topology/fixtures/" + name;
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream stream(line);
  std::vector<std::string> out;
  for (std::string word; stream >> word;) out.push_back(word);
  return out;
}

// The words after `label` on the first line below `section`'s header line whose first word is
// `label` (the line holding `section` and the column header after it are skipped).
std::vector<std::string> row(const std::string& output, const std::string& section,
                             const std::string& label) {
  std::size_t at = output.find(section);
  if (at == std::string::npos) return {};
  std::istringstream lines(output.substr(at));
  std::string line;
  std::getline(lines, line);  // the section's title
  std::getline(lines, line);  // column headers
  while (std::getline(lines, line)) {
    auto w = words(line);
    if (!w.empty() && w.front() == label) return std::vector<std::string>(w.begin() + 1, w.end());
  }
  return {};
}

using Words = std::vector<std::string>;

TEST(Colltopo, TwoEmulatedNodesShowNodesRankMapAndLinkClasses) {
  const ScratchFile json("colltopo_nodes.json");
  const auto result =
      run_command(colltopo("--nodes 2 --ranks-per-node 2 --json " + json.path()), 60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto& out = result.output;
  EXPECT_NE(out.find("node 0 (ranks 0,1): "), std::string::npos) << out;
  EXPECT_NE(out.find("node 1 (ranks 2,3): "), std::string::npos) << out;
  EXPECT_EQ(out.find("node 2 "), std::string::npos) << out;
  EXPECT_NE(out.find("rank map: 4 ranks on 2 nodes"), std::string::npos) << out;
  EXPECT_NE(out.find("S = same-node over ucx sm"), std::string::npos) << out;
  EXPECT_NE(out.find("X = cross-node over ucx tcp"), std::string::npos) << out;
  EXPECT_EQ(row(out, "link classes", "r0"), (Words{"-", "S", "X", "X"})) << out;
  EXPECT_EQ(row(out, "link classes", "r1"), (Words{"S", "-", "X", "X"})) << out;
  EXPECT_EQ(row(out, "link classes", "r2"), (Words{"X", "X", "-", "S"})) << out;
  EXPECT_EQ(row(out, "link classes", "r3"), (Words{"X", "X", "S", "-"})) << out;
  // Rank map rows: rank, node, local/size.
  const auto rank2 = row(out, "rank map", "2");
  ASSERT_GE(rank2.size(), 2u) << out;
  EXPECT_EQ(rank2[0], "1") << out;    // node
  EXPECT_EQ(rank2[1], "0/2") << out;  // local rank / ranks on the node
  // Node 1's tree travelled from rank 2 to rank 0 (topology_codec); one host, so it must read
  // exactly as node 0's.
  const auto tree = [&](const std::string& title) {
    const std::size_t start = out.find(title);
    const std::size_t body = out.find('\n', start);
    return out.substr(body, out.find("\n\n", body) - body);
  };
  EXPECT_EQ(tree("node 0 (ranks 0,1): "), tree("node 1 (ranks 2,3): "));
  const auto report = read_json(json.path());
  EXPECT_EQ(report.at("num_ranks"), 4);
  EXPECT_EQ(report.at("num_nodes"), 2);
  ASSERT_EQ(report.at("nodes").size(), 2u);
  EXPECT_EQ(report.at("nodes")[1].at("node"), 1);
  EXPECT_EQ(report.at("nodes")[1].at("ranks"), (std::vector<int>{2, 3}));
  ASSERT_EQ(report.at("ranks").size(), 4u);
  EXPECT_EQ(report.at("ranks")[2].at("node"), 1);
  // Every ordered pair once; same node within {0,1} and {2,3}, cross-node otherwise.
  ASSERT_EQ(report.at("links").size(), 12u);
  for (const auto& link : report.at("links")) {
    const int a = link.at("a").get<int>(), b = link.at("b").get<int>();
    EXPECT_EQ(link.at("class"), a / 2 == b / 2 ? "same-node" : "cross-node") << a << "-" << b;
  }
}

TEST(Colltopo, UnevenNodeSizes) {
  const auto result = run_command(colltopo("--node-sizes 2,1"), 60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("rank map: 3 ranks on 2 nodes"), std::string::npos);
  EXPECT_EQ(row(result.output, "link classes", "r2"), (Words{"X", "X", "-"})) << result.output;
}

TEST(Colltopo, MeasurePrintsFiniteMatrices) {
  const ScratchFile json("colltopo_measure.json");
  const auto result = run_command(colltopo("--nodes 2 --ranks-per-node 2 --measure "
                                           "--measure-bytes 1M --measure-iters 50 --json " +
                                           json.path()),
                                  60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  for (const char* section : {"measured latency", "measured bandwidth"}) {
    for (int a = 0; a < 4; ++a) {
      const auto cells = row(result.output, section, "r" + std::to_string(a));
      ASSERT_EQ(cells.size(), 4u) << section << "\n" << result.output;
      for (int b = 0; b < 4; ++b) {
        if (a == b) {
          EXPECT_EQ(cells[static_cast<std::size_t>(b)], "-");
          continue;
        }
        const double value = std::strtod(cells[static_cast<std::size_t>(b)].c_str(), nullptr);
        EXPECT_TRUE(std::isfinite(value) && value > 0) << section << " r" << a << "->r" << b << "\n"
                                                       << result.output;
      }
    }
  }
  EXPECT_NE(result.output.find("slow links:"), std::string::npos) << result.output;
  const auto measure = read_json(json.path()).at("measure");
  EXPECT_EQ(measure.at("bytes"), 1048576);
  const auto& bandwidth = measure.at("gbytes_per_s");
  ASSERT_EQ(bandwidth.size(), 4u);
  for (std::size_t a = 0; a < 4; ++a) {
    ASSERT_EQ(bandwidth[a].size(), 4u);
    for (std::size_t b = 0; b < 4; ++b) {
      if (a == b) {
        EXPECT_TRUE(bandwidth[a][b].is_null());  // no link to itself
      } else {
        EXPECT_GT(bandwidth[a][b].get<double>(), 0) << a << "->" << b;
      }
    }
  }
}

TEST(Colltopo, P40FixtureShowsGpusNicAndPathClasses) {
  const ScratchFile json("colltopo_p40.json");
  const auto result =
      run_command(colltopo("--xml " + fixture("p40_node.xml") + " --json " + json.path()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto& out = result.output;
  EXPECT_NE(out.find("2 packages, 2 NUMA nodes, 16 cores, 32 PUs, 4 GPUs, 3 NICs"),
            std::string::npos)
      << out;
  std::size_t p40s = 0;
  for (std::size_t at = 0; (at = out.find("Tesla P40", at)) != std::string::npos; ++at) ++p40s;
  EXPECT_EQ(p40s, 4u) << out;
  EXPECT_NE(out.find("mlx4_0  15b3:1003  InfiniBand 56 Gb/s"), std::string::npos) << out;
  EXPECT_NE(out.find("switch 10b5:8796"), std::string::npos) << out;
  EXPECT_EQ(row(out, "path classes", "GPU0"),
            (Words{"X", "PIX", "SYS", "SYS", "PIX", "PHB", "PHB"}))
      << out;
  EXPECT_EQ(row(out, "path classes", "GPU2"),
            (Words{"SYS", "SYS", "X", "PIX", "SYS", "SYS", "SYS"}))
      << out;
  for (int g = 0; g < 4; ++g)
    EXPECT_NE(out.find("nearest NIC of GPU" + std::to_string(g) + ": NIC0 mlx4_0 (" +
                       (g < 2 ? "PIX" : "SYS") + ")"),
              std::string::npos)
        << out;
  EXPECT_EQ(out.find("warning"), std::string::npos) << out;
  const auto report = read_json(json.path());
  ASSERT_EQ(report.at("files").size(), 1u);
  const auto& file = report.at("files")[0];
  EXPECT_EQ(file.at("fallback"), false);
  std::map<std::string, std::string> classes;
  for (const auto& path : file.at("paths")) {
    classes[path.at("a").get<std::string>() + "-" + path.at("b").get<std::string>()] =
        path.at("class").get<std::string>();
  }
  EXPECT_EQ(classes["GPU0-GPU1"], "PIX");
  EXPECT_EQ(classes["GPU0-GPU2"], "SYS");
}

TEST(Colltopo, Nvlink8AndVmFixtures) {
  const auto result = run_command(
      colltopo("--xml " + fixture("nvlink8_node.xml") + " --xml " + fixture("vm_node.xml")));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto& out = result.output;
  EXPECT_NE(out.find("8 GPUs, 4 NICs"), std::string::npos) << out;
  EXPECT_EQ(row(out, "path classes", "GPU0"), (Words{"X", "NVL", "NVL", "NVL", "NVL", "NVL", "NVL",
                                                     "NVL", "PIX", "PHB", "SYS", "SYS"}))
      << out;
  EXPECT_EQ(row(out, "path classes", "NIC0").at(1), "PXB") << out;  // GPU1-mlx5_0
  for (int g = 0; g < 8; ++g)
    EXPECT_NE(out.find("nearest NIC of GPU" + std::to_string(g) + ": NIC" + std::to_string(g / 2) +
                       " mlx5_" + std::to_string(g / 2)),
              std::string::npos)
        << out;
  EXPECT_NE(out.find("NVLink: 28 GPU pairs, 300 GB/s per pair, through NVSwitches"),
            std::string::npos)
      << out;
  const std::size_t vm = out.find("vm_node.xml: vm (xml:");
  ASSERT_NE(vm, std::string::npos) << out;
  EXPECT_NE(out.find("0 GPUs, 1 NICs", vm), std::string::npos) << out;
  EXPECT_NE(out.find("eth0", vm), std::string::npos) << out;
}

TEST(Colltopo, CorruptOrMissingFixtureWarnsAndFallsBack) {
  for (const std::string& file : {fixture("corrupt.xml"), std::string("/nonexistent/node.xml")}) {
    const auto result = run_command(colltopo("--xml " + file));
    EXPECT_EQ(result.exit_code, 0) << result.output;
    const auto& out = result.output;
    // One warning line names the file (discover_local may add its own about this machine).
    std::size_t warnings = 0;
    const std::string about_file = "libcoll topology: warning: cannot ";
    for (std::size_t at = 0; (at = out.find(about_file, at)) != std::string::npos; ++at) ++warnings;
    EXPECT_EQ(warnings, 1u) << out;
    EXPECT_NE(out.find("libcoll topology: warning: cannot "), std::string::npos) << out;
    EXPECT_NE(out.find("'" + file + "'"), std::string::npos) << out;
    EXPECT_NE(out.find(file + " (unreadable; fallback shown): "), std::string::npos) << out;
    EXPECT_NE(out.find("path classes"), std::string::npos) << out;  // the fallback is described
  }
}

TEST(Colltopo, RunsUnderMpirun) {
  if (run_command("sh -c 'command -v mpirun'", 10).exit_code != 0) GTEST_SKIP() << "no mpirun";
  const auto result = run_command("mpirun --allow-run-as-root --oversubscribe -np 3 " +
                                      colltopo("--measure --measure-bytes 256K --measure-iters 20"),
                                  60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("rank map: 3 ranks on 1 nodes"), std::string::npos) << result.output;
  EXPECT_EQ(row(result.output, "link classes", "r1"), (Words{"S", "-", "S"})) << result.output;
  EXPECT_EQ(row(result.output, "measured bandwidth", "r2").size(), 3u) << result.output;
}

TEST(Colltopo, RecommendAsksTheCostModel) {
  const auto result = run_command(colltopo("--nodes 2 --recommend"), 60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("recommendation for "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("268435456"), std::string::npos) << result.output;
}

TEST(Colltopo, BadInputIsOneLineAndExitCodeTwo) {
  for (const char* args :
       {"--bogus", "--nodes 0", "--ranks-per-node 0", "--node-sizes 2,x", "--node-sizes 2,",
        "-g 2 --node-sizes 1,1", "--measure-bytes lots", "--measure-iters 0", "--xml",
        "--xml a.xml --nodes 2", "--xml a.xml --measure", "--nodes two"}) {
    const auto result = run_command(colltopo(args), 30);
    EXPECT_EQ(result.exit_code, 2) << args << ": " << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1)
        << args << ": " << result.output;
    EXPECT_EQ(result.output.rfind("colltopo: error: ", 0), 0u) << args << ": " << result.output;
  }
}

}  // namespace

#else
TEST(Colltopo, NotBuilt) {
  GTEST_SKIP() << "colltopo target not built";
}
#endif
