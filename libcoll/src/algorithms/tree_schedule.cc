#include "algorithms/tree_schedule.hpp"

namespace coll {
namespace {

// The shape both trees share, over positions 1..n: a position's height is its number of trailing
// zero bits, so odd positions are leaves, and the largest power of two <= n is the root. A node
// p = ...b00 (lowest set bit b) has children p - b/2 and p + b/2; when p + b/2 is past n, the
// right child is the first of p + b/4, p + b/8, ... that exists.
int lowest_bit(int p) {
  return p & -p;
}

int parent_position(int p, int n) {  // 0 for the root
  const int b = lowest_bit(p);
  if ((p & (2 * b)) != 0) return p - b;  // p is the right child of p - b
  if (p + b <= n) return p + b;          // p is the left child of p + b
  return p - b;                          // p replaces a right child that is past n
}

void child_positions(int p, int n, int& left, int& right) {
  left = right = 0;
  const int b = lowest_bit(p);
  if (b == 1) return;
  left = p - b / 2;
  for (int c = b / 2; c >= 1; c /= 2) {
    if (p + c <= n) {
      right = p + c;
      return;
    }
  }
}

// Tree 0 places group index i at position i + 1. Tree 1 mirrors it when n is even and shifts it
// by one when n is odd; either way the odd positions (leaves) of one tree are the interior of the
// other (the shift leaves index n - 1 a leaf in both).
int position_of(int tree, int index, int n) {
  if (tree == 0) return index + 1;
  return n % 2 == 0 ? n - index : (index + 1) % n + 1;
}

int index_of(int tree, int position, int n) {
  if (position == 0) return -1;
  if (tree == 0) return position - 1;
  return n % 2 == 0 ? n - position : (position - 2 + n) % n;
}

}  // namespace

TreeNode tree_node(int tree, int me, int n) {
  const int p = position_of(tree, me, n);
  TreeNode node;
  node.parent = index_of(tree, parent_position(p, n), n);
  int left = 0;
  int right = 0;
  child_positions(p, n, left, right);
  node.left = index_of(tree, left, n);
  node.right = index_of(tree, right, n);
  for (int q = parent_position(p, n); q != 0; q = parent_position(q, n)) ++node.depth;
  return node;
}

}  // namespace coll
