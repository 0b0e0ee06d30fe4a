// The cross-rank part of topology: RankInfo text round trips, and RankMaps from synthetic ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "coll/error.hpp"
#include "coll/topology/node_topology.hpp"
#include "coll/topology/rank_map.hpp"

namespace coll::topo {
namespace {

RankInfo rank(int r, const std::string& host, int node_override = -1, std::string process = "") {
  RankInfo info;
  info.rank = r;
  info.host_identity = host;
  info.node_override = node_override;
  info.process_id = process.empty() ? "pid-" + std::to_string(r) : process;
  return info;
}

template <typename Fn>
void expect_invalid(Fn&& fn, const std::string& part = "") {
  try {
    fn();
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

using Ints = std::vector<int>;

TEST(RankMap, TwoHostsTwoRanksEach) {
  RankMap m = build_rank_map({rank(0, "a/1"), rank(1, "a/1"), rank(2, "b/2"), rank(3, "b/2")});
  EXPECT_EQ(m.size, 4);
  EXPECT_EQ(m.num_nodes(), 2);
  EXPECT_EQ(m.node_of_rank, (Ints{0, 0, 1, 1}));
  EXPECT_EQ(m.host_of_rank, (Ints{0, 0, 1, 1}));
  EXPECT_EQ(m.local_rank, (Ints{0, 1, 0, 1}));
  EXPECT_EQ(m.local_size, (Ints{2, 2, 2, 2}));
  EXPECT_EQ(m.ranks_of_node, (std::vector<Ints>{{0, 1}, {2, 3}}));
  EXPECT_EQ(m.node_names, (std::vector<std::string>{"a/1", "b/2"}));
  EXPECT_EQ(m.link(0, 0), LinkClass::SameProcess);
  EXPECT_EQ(m.link(0, 1), LinkClass::SameNode);
  EXPECT_EQ(m.link(1, 0), LinkClass::SameNode);
  EXPECT_EQ(m.link(1, 2), LinkClass::CrossNode);
  EXPECT_EQ(m.link(3, 0), LinkClass::CrossNode);
  EXPECT_EQ(to_string(m.link(1, 2)), "cross-node");
}

TEST(RankMap, NodesNumberedByFirstAppearance) {
  RankMap m = build_rank_map({rank(0, "b/2"), rank(1, "a/1"), rank(2, "b/2"), rank(3, "a/1")});
  EXPECT_EQ(m.node_of_rank, (Ints{0, 1, 0, 1}));
  EXPECT_EQ(m.local_rank, (Ints{0, 0, 1, 1}));
  EXPECT_EQ(m.ranks_of_node, (std::vector<Ints>{{0, 2}, {1, 3}}));
}

TEST(RankMap, UnevenThreePlusTwo) {
  RankMap m = build_rank_map(
      {rank(0, "a/1"), rank(1, "a/1"), rank(2, "a/1"), rank(3, "b/2"), rank(4, "b/2")});
  EXPECT_EQ(m.local_size, (Ints{3, 3, 3, 2, 2}));
  EXPECT_EQ(m.local_rank, (Ints{0, 1, 2, 0, 1}));
  EXPECT_EQ(m.ranks_of_node[0].size(), 3u);
  EXPECT_EQ(m.link(2, 3), LinkClass::CrossNode);
}

TEST(RankMap, CollNodeSplitsOneHost) {
  RankMap m =
      build_rank_map({rank(0, "a/1", 1), rank(1, "a/1", 1), rank(2, "a/1", 0), rank(3, "a/1", 0)});
  EXPECT_EQ(m.node_of_rank, (Ints{0, 0, 1, 1}));  // dense, by first appearance, not by value
  EXPECT_EQ(m.host_of_rank, (Ints{0, 0, 0, 0}));
  EXPECT_EQ(m.local_rank, (Ints{0, 1, 0, 1}));
  EXPECT_EQ(m.link(1, 2), LinkClass::CrossNode);
  EXPECT_EQ(m.link(2, 3), LinkClass::SameNode);
  EXPECT_EQ(m.node_names[0], "a/1#COLL_NODE=1");
}

TEST(RankMap, CollNodeNeverJoinsDifferentHosts) {
  RankMap m = build_rank_map({rank(0, "a/1", 0), rank(1, "b/2", 0)});
  EXPECT_EQ(m.num_nodes(), 2);
  EXPECT_EQ(m.link(0, 1), LinkClass::CrossNode);
}

TEST(RankMap, RanksOfOneProcess) {
  RankMap m = build_rank_map({rank(0, "a/1", -1, "p"), rank(1, "a/1", -1, "p"),
                              rank(2, "a/1", -1, "q"), rank(3, "a/1", 5, "q")});
  EXPECT_EQ(m.link(0, 1), LinkClass::SameProcess);
  EXPECT_EQ(m.link(1, 2), LinkClass::SameNode);
  EXPECT_EQ(m.link(2, 3), LinkClass::CrossNode);  // one process, but split by COLL_NODE
}

TEST(RankMap, RejectsBadInput) {
  expect_invalid([] { build_rank_map({}); }, "no rank infos");
  expect_invalid([] { build_rank_map({rank(0, "a"), rank(2, "a")}); }, "rank order");
  expect_invalid([] { build_rank_map({rank(1, "a"), rank(0, "a")}); }, "rank order");
  expect_invalid([] { build_rank_map({rank(0, "")}); }, "host identity");
}

TEST(RankInfo, RoundTrip) {
  RankInfo info = rank(7, "node 17/boot-id%41=x\n\xc3\xa9", 3, "1234-00ff");
  info.binding = "0-3,8";
  info.gpu = 2;
  info.gpu_bus_id = "0000:83:00.0";
  info.nic = "mlx5_1";
  std::string text = info.serialize();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 9) << text;
  EXPECT_EQ(RankInfo::deserialize(text), info);
  RankInfo plain = rank(0, "vm/id");
  EXPECT_EQ(RankInfo::deserialize(plain.serialize()), plain);
}

TEST(RankInfo, RejectsMalformedText) {
  const std::string good = rank(1, "a/1").serialize();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "header"},
      {"rank=1\n", "header"},
      {with("coll-rank-info 1", "coll-rank-info 2"), "header"},
      {with("rank=1\n", ""), "fields"},
      {good + "extra=1\n", "fields"},
      {with("rank=1", "rank=1x"), "integer"},
      {with("rank=1", "rank="), "integer"},
      {with("rank=1", "rank=-1"), "below"},
      {with("rank=1", "rank=99999999999"), "integer"},
      {with("gpu=-1", "gpu=-2"), "below"},
      {with("host=a/1", "host="), "host"},
      {with("host=a/1", "host=a%4"), "escape"},
      {with("host=a/1", "host=a%zz"), "escape"},
      {with("host=a/1", "host=a b"), "character"},
      {with("host=a/1", "hast=a/1"), "host"},
      {with("nic=", "nic=\t"), "character"},
      {with("process=pid-1", "process="), "process"},
  };
  for (const auto& [text, part] : bad) expect_invalid([&] { RankInfo::deserialize(text); }, part);
}

TEST(RankInfo, NodeOverrideParsing) {
  EXPECT_EQ(parse_node_override(nullptr), -1);
  EXPECT_EQ(parse_node_override(""), -1);
  EXPECT_EQ(parse_node_override("0"), 0);
  EXPECT_EQ(parse_node_override("12"), 12);
  for (const char* bad : {"-1", "x", "3 ", "1.5", "99999999999"})
    expect_invalid([&] { parse_node_override(bad); }, "COLL_NODE");
}

TEST(RankInfo, MakeFromFixtureAndEnvironment) {
  const std::string dir = std::string(COLL_SOURCE_DIR) + "/topology/fixtures/";
  NodeTopology p40 = load_xml(dir + "p40_node.xml");
  ASSERT_EQ(setenv("COLL_NODE", "2", 1), 0);
  RankInfo info = make_rank_info(5, p40, 2);
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.node_override, 2);
  EXPECT_EQ(info.host_identity, p40.host_identity);
  EXPECT_EQ(info.process_id, this_process_id());
  EXPECT_EQ(info.gpu_bus_id, "0000:83:00.0");
  EXPECT_EQ(info.nic, "mlx4_0");
  ASSERT_EQ(setenv("COLL_NODE", "two", 1), 0);
  expect_invalid([&] { make_rank_info(0, p40); }, "COLL_NODE");
  ASSERT_EQ(unsetenv("COLL_NODE"), 0);
  RankInfo vm = make_rank_info(0, load_xml(dir + "vm_node.xml"));
  EXPECT_EQ(vm.node_override, -1);
  EXPECT_EQ(vm.gpu, -1);
  EXPECT_EQ(vm.gpu_bus_id, "");
  EXPECT_EQ(vm.nic, "eth0");
}

}  // namespace
}  // namespace coll::topo
