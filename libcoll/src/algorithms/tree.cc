// Double binary tree all-reduce (Sanders, Speck, Träff; NCCL >= 2.4): the buffer is split in two
// halves, each reduced up and broadcast down its own binary tree. The two trees are complementary,
// so (but for one rank when the group is odd) every rank is interior in exactly one of them and a
// leaf in the other: each rank sends and receives about twice the buffer, as in the ring, but in
// O(log n) steps. Both halves are cut into segments and the trees run as one pipelined stream.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/partition.hpp"
#include "algorithms/registry.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

// One rank's place in one tree, as group indices (-1: none).
struct TreeNode {
  int parent = -1;
  int left = -1;
  int right = -1;
  int depth = 0;
};

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

// Message kinds, so that every (sender, message index) pair is used once per collective.
enum Kind : std::uint32_t { kUp = 0, kDownLeft = 1, kDownRight = 2, kKinds = 3 };

// A unit of work: segment `segment` of tree `tree`'s half, going up (reduce) or down (broadcast).
struct Unit {
  std::uint32_t segment;
  std::uint8_t tree;
  bool up;
  std::uint32_t slot;  // staging slot pair for the children's partial results (up units)
};

void tree_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  const Group& group = context.group;
  const int n = group.size();
  const std::size_t elem = dtype_size(args.type);
  auto* recv = static_cast<std::byte*>(args.recv);
  const auto* send = static_cast<const std::byte*>(args.send);
  if (trivial_allreduce(context, args)) return;

  const Partition halves(args.count, 2);
  const std::size_t longest = halves.max_length();
  std::size_t segment = std::max<std::size_t>(1, context.tuning.segment_bytes / elem);
  segment = std::min(segment, longest);
  // Message index = (segment * 2 + tree) * kKinds + kind must stay within the tag's 24 bits.
  const std::size_t max_segments = TagSpace::kMaxMessages / (2 * kKinds);
  if ((longest + segment - 1) / segment > max_segments) {
    segment = (longest + max_segments - 1) / max_segments;
  }
  const std::size_t segments = (longest + segment - 1) / segment;
  auto range = [&](int tree, std::size_t index, std::size_t& offset) {
    const std::size_t length = halves.length(static_cast<std::size_t>(tree));
    const std::size_t begin = std::min(length, index * segment);
    offset = halves.offset(static_cast<std::size_t>(tree)) + begin;
    return std::min(length, begin + segment) - begin;
  };
  auto message = [](std::size_t index, int tree, Kind kind) {
    return static_cast<std::uint32_t>((index * 2 + static_cast<std::size_t>(tree)) * kKinds + kind);
  };

  const TreeNode nodes[2] = {tree_node(0, group.me, n), tree_node(1, group.me, n)};
  // My side below my parent decides which down message is mine.
  Kind down_kind[2];
  for (int t = 0; t < 2; ++t) {
    const TreeNode parent = nodes[t].parent < 0 ? TreeNode{} : tree_node(t, nodes[t].parent, n);
    down_kind[t] = parent.right == group.me ? kDownRight : kDownLeft;
  }

  // Order the units by a clock that every dependency advances: going up, segment k leaves depth d
  // at k - d; going down, it reaches depth d at k + d. Every rank follows that order with blocking
  // waits, so the rank holding the earliest unfinished unit always has what it needs: no
  // deadlock, and each rank forwards segment k while k + 1 is arriving.
  const int max_depth = std::max(nodes[0].depth, nodes[1].depth);
  const std::size_t window = static_cast<std::size_t>(std::max(1, context.tuning.window));
  std::vector<Unit> units;
  units.reserve(4 * segments);
  std::uint32_t staged = 0;
  for (long clock = -max_depth; clock < static_cast<long>(segments) + max_depth; ++clock) {
    for (int phase = 0; phase < 2; ++phase) {
      for (int t = 0; t < 2; ++t) {
        const bool up = phase == 0;
        if (!up && nodes[t].parent < 0) continue;  // the root broadcasts as it reduces
        const long k = up ? clock + nodes[t].depth : clock - nodes[t].depth;
        std::size_t offset = 0;
        if (k < 0 || k >= static_cast<long>(segments) || range(t, std::size_t(k), offset) == 0) {
          continue;
        }
        const bool staging = up && nodes[t].left >= 0;
        units.push_back({static_cast<std::uint32_t>(k), static_cast<std::uint8_t>(t), up,
                         staging ? static_cast<std::uint32_t>(staged++ % window) : 0});
      }
    }
  }

  const std::size_t slot_bytes = segment * elem;
  auto staging = context.pool.acquire(2 * window * slot_bytes);
  auto slot = [&](const Unit& unit, int child) {
    return staging.data() + (2 * unit.slot + static_cast<std::size_t>(child)) * slot_bytes;
  };
  const Transport::Request none{nullptr, -1, false, 0, true};
  std::vector<Transport::Request> receives(2 * units.size(), none);
  std::vector<Transport::Request> sends;
  sends.reserve(3 * units.size());
  const int me = group.global(group.me);

  auto post_send = [&](int index, std::uint32_t tag, const std::byte* data, std::size_t length) {
    sends.push_back(context.transport.send(group.global(index), context.tags.make(me, tag), data,
                                           length * elem));
  };
  auto post_recv = [&](std::size_t u) {
    const Unit& unit = units[u];
    const TreeNode& node = nodes[unit.tree];
    std::size_t offset = 0;
    const std::size_t length = range(unit.tree, unit.segment, offset);
    auto receive = [&](int index, int which, Kind kind, std::byte* target) {
      const int peer = group.global(index);
      receives[2 * u + static_cast<std::size_t>(which)] = context.transport.recv(
          peer, context.tags.make(peer, message(unit.segment, unit.tree, kind)), target,
          length * elem);
    };
    if (!unit.up) {
      receive(node.parent, 0, down_kind[unit.tree], recv + offset * elem);
      return;
    }
    if (node.left >= 0) receive(node.left, 0, kUp, slot(unit, 0));
    if (node.right >= 0) receive(node.right, 1, kUp, slot(unit, 1));
  };

  for (std::size_t u = 0; u < std::min(window, units.size()); ++u) post_recv(u);
  for (std::size_t u = 0; u < units.size(); ++u) {
    const Unit& unit = units[u];
    const TreeNode& node = nodes[unit.tree];
    // Only the receives this unit posted (its children's, or its parent's): left comes first.
    const std::size_t posted = unit.up ? (node.left >= 0) + (node.right >= 0) : 1;
    context.transport.wait_all(std::span<Transport::Request>(&receives[2 * u], posted));
    std::size_t offset = 0;
    const std::size_t length = range(unit.tree, unit.segment, offset);
    std::byte* target = recv + offset * elem;
    if (unit.up) {
      const std::byte* result = send + offset * elem;  // a leaf passes its input on
      if (node.left >= 0) {
        // Fixed order, whatever arrives first: left subtree, this rank, right subtree.
        reduce(args.type, args.op, target, slot(unit, 0), result, length);
        if (node.right >= 0) reduce(args.type, args.op, target, target, slot(unit, 1), length);
        result = target;
      }
      if (node.parent >= 0) {
        post_send(node.parent, message(unit.segment, unit.tree, kUp), result, length);
      } else if (args.op == ReduceOp::Avg) {
        finish_average(args.type, target, length, n);  // once, at the root, before broadcast
      }
    }
    if (!unit.up || node.parent < 0) {  // the segment is final here: pass it down
      if (node.left >= 0) {
        post_send(node.left, message(unit.segment, unit.tree, kDownLeft), target, length);
      }
      if (node.right >= 0) {
        post_send(node.right, message(unit.segment, unit.tree, kDownRight), target, length);
      }
    }
    if (u + window < units.size()) post_recv(u + window);
  }
  context.transport.wait_all(sends);
}

const AlgorithmRegistration kTree({"tree", tree_allreduce,
                                   "pipelined double binary tree; two complementary trees each "
                                   "carry half the data, O(log n) latency steps",
                                   10});

}  // namespace
}  // namespace coll
