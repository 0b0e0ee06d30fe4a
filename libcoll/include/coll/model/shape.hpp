// The job as the cost model sees it: how many ranks, on how many nodes, and which rank is where.
// Nodes may hold different numbers of ranks (uneven shapes such as 3 + 2).
#pragma once

#include <string>
#include <vector>

namespace coll::model {

struct Shape {
  int ranks = 1;
  int nodes = 1;
  std::vector<int> local_sizes{1};   // ranks on each node, indexed by node 0..nodes-1
  std::vector<int> node_of_rank{0};  // node index (0..nodes-1) of every rank

  // Node ids may be any integers; they are renumbered 0.. in order of first appearance.
  // Throws coll::Error (InvalidArgument) when the vector is empty.
  static Shape from_node_of_rank(const std::vector<int>& node_of_rank);
  // `nodes` nodes of `ranks_per_node` ranks each, ranks numbered node by node.
  static Shape uniform(int nodes, int ranks_per_node);

  int max_local() const;
  int min_local() const;
  bool same_node(int a, int b) const { return node_of_rank[a] == node_of_rank[b]; }
  std::string describe() const;  // "4 ranks on 2 nodes (2+2)"
};

}  // namespace coll::model
