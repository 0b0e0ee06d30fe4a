#include "algorithms/parameter_server_schedule.hpp"

#include <algorithm>
#include <utility>

namespace coll {
namespace {

// Each member's position within its node (0 for the first member of every node), in group
// order. Node ids are the job's node indices: small and not negative.
std::vector<int> positions_in_node(const std::vector<int>& node_of_member) {
  if (node_of_member.empty()) return {};
  const int nodes = *std::max_element(node_of_member.begin(), node_of_member.end()) + 1;
  std::vector<int> seen_on_node(static_cast<std::size_t>(nodes)), position;
  position.reserve(node_of_member.size());
  for (const int node : node_of_member) position.push_back(seen_on_node[std::size_t(node)]++);
  return position;
}

}  // namespace

int ps_server_count(int members, const ServerPlacement& placement) {
  return placement.servers <= 0 ? members : std::min(placement.servers, members);
}

std::vector<int> ps_servers(const std::vector<int>& node_of_member,
                            const ServerPlacement& placement) {
  const int n = static_cast<int>(node_of_member.size());
  const int k = ps_server_count(n, placement);
  std::vector<int> servers;
  if (placement.dedicated) {
    for (int index = n - k; index < n; ++index) servers.push_back(index);
    return servers;
  }
  // Rank by (position within its node, node): round-robin over the nodes.
  const std::vector<int> position = positions_in_node(node_of_member);
  std::vector<std::pair<int, int>> order;  // (local position, group index)
  for (int index = 0; index < n; ++index) {
    order.emplace_back(position[static_cast<std::size_t>(index)], index);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (int j = 0; j < k; ++j) servers.push_back(order[static_cast<std::size_t>(j)].second);
  std::sort(servers.begin(), servers.end());
  return servers;
}

std::vector<int> push_order(std::vector<int> servers, const std::vector<int>& node_of_member,
                            int me) {
  const int nodes = *std::max_element(node_of_member.begin(), node_of_member.end()) + 1;
  const int my_node = node_of_member[static_cast<std::size_t>(me)];
  auto turn = [&](int member) {  // 1 for the next node, ..., nodes for this one
    const int node = node_of_member[static_cast<std::size_t>(member)];
    return (node - my_node + nodes - 1) % nodes + 1;
  };
  std::stable_sort(servers.begin(), servers.end(), [&](int a, int b) { return turn(a) < turn(b); });
  return servers;
}

std::vector<int> pull_order(std::vector<int> peers, const std::vector<int>& node_of_member) {
  const std::vector<int> position = positions_in_node(node_of_member);
  std::stable_sort(peers.begin(), peers.end(), [&](int a, int b) {
    const auto i = static_cast<std::size_t>(a), j = static_cast<std::size_t>(b);
    return std::pair(position[i], node_of_member[i]) < std::pair(position[j], node_of_member[j]);
  });
  return peers;
}

}  // namespace coll
