// The double binary tree's shape as pure functions of (tree, group index, group size),
// testable without processes: both trees span the group, every member has at most two
// children, and (but for one member when the group is odd) each member is interior in one
// tree and a leaf in the other.
#pragma once

namespace coll {

// One member's place in one tree, as group indices (-1: none).
struct TreeNode {
  int parent = -1;
  int left = -1;
  int right = -1;
  int depth = 0;  // edges from the root
};

// Member `index` of a group of `n` in tree 0 or 1.
TreeNode tree_node(int tree, int index, int n);

}  // namespace coll
