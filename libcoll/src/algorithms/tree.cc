// Double binary tree all-reduce (Sanders, Speck, Träff; NCCL >= 2.4): the buffer is split in two
// halves, each reduced up and broadcast down its own binary tree. The two trees are complementary,
// so (but for one rank when the group is odd) every rank is interior in exactly one of them and a
// leaf in the other: each rank sends and receives about twice the buffer, as in the ring, but in
// O(log n) steps. Both halves are cut into segments and the trees run as one pipelined stream.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "algorithms/partition.hpp"
#include "algorithms/pipeline.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/tree_schedule.hpp"
#include "model/link_model.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

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
  // Message index = (segment * 2 + tree) * kKinds + kind: 2 * kKinds messages per segment.
  const Segmentation cut = Segmentation::of(context, elem, halves.max_length(), 2 * kKinds);
  const std::size_t segments = cut.segments();
  auto range = [&](int tree, std::size_t index, std::size_t& offset) {
    const auto half = static_cast<std::size_t>(tree);
    const Piece piece = cut.piece(halves.length(half), index);
    offset = halves.offset(half) + piece.offset;
    return piece.length;
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
  const std::size_t window = window_of(context.tuning);
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

  const std::size_t slot_bytes = cut.elems() * elem;
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

  auto finish = [&](std::size_t u) {
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
        context.reduce(args.type, args.op, target, slot(unit, 0), result, length);
        if (node.right >= 0)
          context.reduce(args.type, args.op, target, target, slot(unit, 1), length);
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
  };
  run_windowed(units.size(), window, post_recv, finish);
  context.transport.wait_all(sends);
}

// Cost: two trees each carry M/2 in k segments; every rank is interior in one tree and a leaf
// in the other, so each pipeline step moves M/k through a rank's port in two messages, each
// holding it alpha. Depth D = floor(log2 p):
// T(k) = 2(D+k-1)*(2alpha + M/k*beta) + (D+k-1)*M/k*gamma (reduce, then broadcast), with the
// best k: k* = sqrt(D*M*(2beta+gamma) / (4alpha)), rounded to the better neighbouring integer,
// segments of at least 64 B. For large M: 2M*beta + 4D*alpha + 4sqrt(2D*alpha*M*beta). A tree
// spanning nodes runs at the inter link's pace (a pipeline is as fast as its slowest stage);
// each tree crosses a node boundary about once per direction, so no NIC sharing.
std::optional<model::Prediction> tree_cost(const model::CostParams& params,
                                           const model::Shape& shape, double m, const Tuning&) {
  model::Prediction out{"tree"};
  const int p = shape.ranks;
  if (p < 2) return out;
  const model::LinkParams& link = shape.nodes > 1 ? params.inter : params.intra;
  const double depth = std::floor(std::log2(double(p)));
  // Inside one node every rank sends in every pipeline step: p flows share the staging path.
  const double beta = shape.nodes > 1 ? link.beta_s_per_byte : model::intra_beta(params, p);
  // A rank's messages of a pipeline step: two (one per tree) each way.
  const double step_alpha =
      shape.nodes > 1 ? model::phase_alpha(params, 0, 2) : model::phase_alpha(params, 2, 0);
  const double gamma = params.gamma_s_per_byte;
  const double k_max = std::max(1.0, std::floor(m / 64));
  auto cost = [&](double k) {
    const double steps = depth + k - 1;
    return model::Prediction{"tree", 2 * steps * step_alpha, 2 * steps * m / k * beta,
                             steps * m / k * gamma};
  };
  double k_star =
      step_alpha > 0 ? std::sqrt(depth * m * (2 * beta + gamma) / (2 * step_alpha)) : k_max;
  k_star = std::clamp(k_star, 1.0, k_max);
  double k = std::floor(k_star);
  if (k + 1 <= k_max && cost(k + 1).total_s() < cost(k).total_s()) k += 1;
  out = cost(k);
  out.detail = model::detail_text("depth %d, k=%.0f segments, on the %s link", int(depth), k,
                                  shape.nodes > 1 ? "inter-node" : "intra-node");
  return out;
}

const AlgorithmRegistration kTree({.name = "tree",
                                   .run = tree_allreduce,
                                   .summary = "pipelined double binary tree; two complementary "
                                              "trees each carry half the data, O(log n) latency "
                                              "steps",
                                   .order = 10,
                                   .cost = tree_cost});

}  // namespace
}  // namespace coll
