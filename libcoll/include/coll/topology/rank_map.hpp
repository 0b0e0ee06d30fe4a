// RankMap: which ranks share a node, each rank's local rank, and the link class of every pair —
// what the communicator needs to pick a transport per link and the groups of the hierarchical
// algorithm. Built identically on every rank from the allgathered RankInfos.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "coll/topology/rank_info.hpp"

namespace coll::topo {

enum class LinkClass { SameProcess, SameNode, CrossNode };

std::string_view to_string(LinkClass link);  // "same-process", "same-node", "cross-node"

struct RankMap {
  int size = 0;
  std::vector<int> node_of_rank;                // dense node ids, by first appearance in rank order
  std::vector<int> host_of_rank;                // dense ids of real hosts, ignoring COLL_NODE
  std::vector<int> local_rank;                  // position among the ranks of its node
  std::vector<int> local_size;                  // number of ranks on its node
  std::vector<std::vector<int>> ranks_of_node;  // ascending
  std::vector<std::string> node_names;          // host identity, plus "#COLL_NODE=n" if split
  std::vector<LinkClass> links;                 // size * size, row-major

  int num_nodes() const { return static_cast<int>(ranks_of_node.size()); }
  LinkClass link(int a, int b) const { return links.at(static_cast<size_t>(a) * size + b); }
};

// A node is a (host identity, COLL_NODE) pair: COLL_NODE splits one host into emulated nodes but
// never joins ranks of different hosts, which could not share memory. Ranks on different nodes
// are CrossNode, ranks of one process on one node SameProcess, the rest SameNode.
// infos[i].rank must be i. Throws coll::Error(InvalidArgument) otherwise or when empty.
RankMap build_rank_map(const std::vector<RankInfo>& infos);

}  // namespace coll::topo
