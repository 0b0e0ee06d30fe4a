#include "coll/model/shape.hpp"

#include <algorithm>
#include <map>

#include "coll/error.hpp"

namespace coll::model {

Shape Shape::from_node_of_rank(const std::vector<int>& node_of_rank) {
  if (node_of_rank.empty()) {
    throw Error(Status::InvalidArgument, "cost model: a job shape needs at least one rank");
  }
  Shape shape;
  shape.ranks = static_cast<int>(node_of_rank.size());
  shape.local_sizes.clear();
  shape.node_of_rank.clear();
  std::map<int, int> index;  // node id -> node index
  for (const int id : node_of_rank) {
    const auto [it, added] = index.emplace(id, static_cast<int>(index.size()));
    if (added) shape.local_sizes.push_back(0);
    ++shape.local_sizes[static_cast<std::size_t>(it->second)];
    shape.node_of_rank.push_back(it->second);
  }
  shape.nodes = static_cast<int>(shape.local_sizes.size());
  return shape;
}

Shape Shape::uniform(int nodes, int ranks_per_node) {
  std::vector<int> node_of_rank;
  for (int node = 0; node < nodes; ++node)
    node_of_rank.insert(node_of_rank.end(), ranks_per_node, node);
  return from_node_of_rank(node_of_rank);
}

int Shape::max_local() const {
  return *std::max_element(local_sizes.begin(), local_sizes.end());
}

int Shape::min_local() const {
  return *std::min_element(local_sizes.begin(), local_sizes.end());
}

std::string Shape::describe() const {
  std::string sizes;
  if (nodes > 1 && min_local() == max_local()) {  // "(8 each)" rather than 512 eights
    sizes = std::to_string(max_local()) + " each";
  } else {
    for (const int size : local_sizes) sizes += (sizes.empty() ? "" : "+") + std::to_string(size);
  }
  return std::to_string(ranks) + " rank" + (ranks == 1 ? "" : "s") + " on " +
         std::to_string(nodes) + " node" + (nodes == 1 ? "" : "s") + " (" + sizes + ")";
}

}  // namespace coll::model
