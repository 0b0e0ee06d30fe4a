// Groups ranks into nodes and classifies every rank pair.
#include "coll/topology/rank_map.hpp"

#include <map>
#include <string>
#include <utility>

#include "coll/error.hpp"

namespace coll::topo {

std::string_view to_string(LinkClass link) {
  switch (link) {
    case LinkClass::SameProcess:
      return "same-process";
    case LinkClass::SameNode:
      return "same-node";
    case LinkClass::CrossNode:
      return "cross-node";
  }
  return "?";
}

RankMap build_rank_map(const std::vector<RankInfo>& infos) {
  if (infos.empty()) throw Error(Status::InvalidArgument, "rank map: no rank infos");
  RankMap map;
  map.size = static_cast<int>(infos.size());
  std::map<std::pair<std::string, int>, int> node_ids;
  std::map<std::string, int> host_ids;
  for (int r = 0; r < map.size; ++r) {
    const RankInfo& info = infos[r];
    if (info.rank != r)
      throw Error(Status::InvalidArgument, "rank map: entry " + std::to_string(r) +
                                               " is from rank " + std::to_string(info.rank) +
                                               "; the bootstrap must gather in rank order");
    if (info.host_identity.empty())
      throw Error(Status::InvalidArgument,
                  "rank map: rank " + std::to_string(r) + " has no host identity");
    auto [host, new_host] = host_ids.try_emplace(info.host_identity, host_ids.size());
    map.host_of_rank.push_back(host->second);
    auto [node, new_node] =
        node_ids.try_emplace({info.host_identity, info.node_override}, map.ranks_of_node.size());
    if (new_node) {
      map.ranks_of_node.emplace_back();
      map.node_names.push_back(
          info.host_identity +
          (info.node_override >= 0 ? "#COLL_NODE=" + std::to_string(info.node_override) : ""));
    }
    map.node_of_rank.push_back(node->second);
    map.local_rank.push_back(static_cast<int>(map.ranks_of_node[node->second].size()));
    map.ranks_of_node[node->second].push_back(r);
  }
  for (int r = 0; r < map.size; ++r)
    map.local_size.push_back(static_cast<int>(map.ranks_of_node[map.node_of_rank[r]].size()));

  map.links.resize(static_cast<size_t>(map.size) * map.size);
  for (int a = 0; a < map.size; ++a)
    for (int b = 0; b < map.size; ++b) {
      LinkClass link = LinkClass::CrossNode;
      if (map.node_of_rank[a] == map.node_of_rank[b])
        link = infos[a].process_id == infos[b].process_id ? LinkClass::SameProcess
                                                          : LinkClass::SameNode;
      map.links[static_cast<size_t>(a) * map.size + b] = link;
    }
  return map;
}

}  // namespace coll::topo
