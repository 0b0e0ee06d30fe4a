// Two-level all-reduce over the node map (ranks grouped by context.node_of_rank).
//
// "hierarchical": intra-node reduce-scatter, then one inter-node all-reduce per shard among the
// ranks holding that shard on every node ("rails", concurrent across ranks), then intra-node
// all-gather. "hierarchical_leader": intra-node reduce to local rank 0, all-reduce among those
// leaders, intra-node broadcast.
//
// Each level runs a named algorithm: COLL_HIER_INTER runs every inter-node all-reduce through
// the registry; its default, auto, lets the cost model choose per call: the one of ring and
// halving_doubling whose composition it prices fastest. COLL_HIER_INTRA=ring (the default) uses the
// ring's own reduce-scatter and all-gather phases; any other algorithm does the intra-node
// reduction as its full all-reduce over the node (every local rank then holds the node's sum), and
// the distribution back stays the ring all-gather.
//
// Uneven nodes: the buffer is cut into S shards, S = the largest number of ranks on a node.
// A node with L ranks groups the shards into L contiguous runs of about S/L shards, one run
// per local rank, so that on a full node every rank holds one shard and on a smaller node a
// rank holds several and joins several rails. A rank runs its rails one after another in shard
// order, which is the same order on every rank, so no rail waits on a rail that waits on it.
//
// Avg is summed at every level and divided by the group size once, by the rank that holds
// the finished value, before it is distributed.
#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "algorithms/hierarchical_schedule.hpp"
#include "algorithms/partition.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/ring_phases.hpp"
#include "coll/error.hpp"
#include "model/link_model.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

// Tag stages of the parts of one collective.
constexpr unsigned kIntraReduceStage = 0;
constexpr unsigned kGatherStage = 1;  // rails: intra all-gather; leader: gather to the leader
constexpr unsigned kLeaderStage = 2;
constexpr unsigned kScatterStage = 3;
constexpr unsigned kBroadcastGatherStage = 4;
constexpr unsigned kFirstRailStage = 2;  // rails use stages 2..kMaxStage, wrapping around

// The algorithms of the two levels: hierarchical's options, declared with its registration.
constexpr std::string_view kIntraOption = "COLL_HIER_INTRA";
constexpr std::string_view kInterOption = "COLL_HIER_INTER";
std::string intra_of(const Tuning& tuning) {
  return algorithm_option(tuning, kIntraOption);
}
std::string inter_of(const Tuning& tuning) {
  return algorithm_option(tuning, kInterOption);
}
Tuning with_inter(const Tuning& tuning, std::string_view inter) {
  Tuning fixed = tuning;
  fixed.algorithm_options.set(kInterOption, std::string(inter));
  return fixed;
}

struct NodeLayout {
  std::vector<std::vector<int>> nodes;  // global ranks per node, nodes by first appearance
  int my_node = 0;
  int my_local = 0;

  Group node_group() const { return {nodes[static_cast<std::size_t>(my_node)], my_local}; }
};

NodeLayout node_layout(const CollectiveContext& context) {
  NodeLayout layout;
  std::map<int, std::size_t> index_of_node;
  for (int index = 0; index < context.group.size(); ++index) {
    const int global = context.group.global(index);
    const int node = context.node_of_rank[static_cast<std::size_t>(global)];
    const auto [it, fresh] = index_of_node.emplace(node, layout.nodes.size());
    if (fresh) layout.nodes.emplace_back();
    auto& members = layout.nodes[it->second];
    if (index == context.group.me) {
      layout.my_node = static_cast<int>(it->second);
      layout.my_local = static_cast<int>(members.size());
    }
    members.push_back(global);
  }
  return layout;
}

bool intra_is_ring(const CollectiveContext& context) {
  return intra_of(context.tuning) == "ring";
}

// The algorithm a level runs; hierarchical itself is refused (it would reuse these stages).
const AlgorithmInfo& level_algorithm(const std::string& name, const char* setting) {
  const AlgorithmInfo* info = find_algorithm(name);
  if (info == nullptr || name.rfind("hierarchical", 0) == 0) {
    std::string known;
    for (const auto& candidate : allreduce_algorithms()) {
      if (candidate.name.rfind("hierarchical", 0) == 0) continue;
      known += (known.empty() ? "" : ", ") + std::string(candidate.name);
    }
    throw Error(Status::InvalidArgument,
                std::string(setting) + "='" + name +
                    "' is not a usable algorithm for this level (try: " + known + ")");
  }
  return *info;
}

using LevelledCost = std::optional<model::Prediction> (*)(const model::CostParams&,
                                                          const model::Shape&, double,
                                                          const Tuning&);

// COLL_HIER_INTER=auto: the candidate whose composition `cost` (either variant's formula) prices
// fastest for `bytes` on `shape`. A function of the parameters, the node map and the size, so
// every rank of the call chooses alike.
std::string cheapest_inter(LevelledCost cost, const model::CostParams& params,
                           const model::Shape& shape, double bytes, const Tuning& tuning) {
  std::string cheapest(kHierInterCandidates[0]);
  double cheapest_s = std::numeric_limits<double>::infinity();
  Tuning fixed = tuning;
  for (const std::string_view name : kHierInterCandidates) {
    fixed.algorithm_options.set(kInterOption, std::string(name));
    const auto predicted = cost(params, shape, bytes, fixed);
    if (predicted && predicted->total_s() < cheapest_s) {
      cheapest = name;
      cheapest_s = predicted->total_s();
    }
  }
  return cheapest;
}

// What this call runs across nodes: COLL_HIER_INTER, or under auto the communicator's cost
// model's choice for the call's size (ring without one). Checks both levels' settings on every
// call (even count 0), so a bad one fails at once.
const AlgorithmInfo& inter_algorithm(const CollectiveContext& context, LevelledCost cost,
                                     std::size_t bytes) {
  if (!intra_is_ring(context)) level_algorithm(intra_of(context.tuning), "COLL_HIER_INTRA");
  std::string name = inter_of(context.tuning);
  if (name == "auto") {
    const Selector* model = context.cost_model;
    name =
        model ? cheapest_inter(cost, model->params(), model->shape(), double(bytes), context.tuning)
              : "ring";
  }
  return level_algorithm(name, "COLL_HIER_INTER");
}

std::optional<model::Prediction> hierarchical_cost(const model::CostParams& params,
                                                   const model::Shape& shape, double m,
                                                   const Tuning& tuning);
std::optional<model::Prediction> hierarchical_leader_cost(const model::CostParams& params,
                                                          const model::Shape& shape, double m,
                                                          const Tuning& tuning);

// Reduces every node member's input into `recv`: with the ring, only block
// ring_block_of(me) ends complete; with another algorithm, all of it does.
void reduce_within_node(const CollectiveContext& context, const Group& node,
                        const AllreduceArgs& args, RingBounds bounds) {
  const CollectiveContext within = context.on(node, kIntraReduceStage);
  if (intra_is_ring(context)) {
    ring_reduce_scatter(within, args, bounds);
  } else {
    level_algorithm(intra_of(context.tuning), "COLL_HIER_INTRA").run(within, args);
  }
}

void hierarchical_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  const std::size_t elem = dtype_size(args.type);
  const AlgorithmInfo& inter = inter_algorithm(context, hierarchical_cost, args.count * elem);
  if (trivial_allreduce(context, args)) return;
  const NodeLayout layout = node_layout(context);
  std::size_t shard_count = 0;
  for (const auto& members : layout.nodes) shard_count = std::max(shard_count, members.size());
  const Partition shards(args.count, shard_count);
  AllreduceArgs sum = args;
  if (sum.op == ReduceOp::Avg) sum.op = ReduceOp::Sum;

  const Group node = layout.node_group();
  const auto local_size = static_cast<std::size_t>(node.size());
  std::vector<std::size_t> bounds(local_size + 1, args.count);
  for (std::size_t b = 0; b < local_size; ++b) {
    bounds[b] = shards.offset(first_shard(b, shard_count, local_size));
  }
  reduce_within_node(context, node, sum, bounds);

  // Rails: for each shard this rank holds, all-reduce it with its holders on the other nodes.
  auto* recv = static_cast<std::byte*>(args.recv);
  const auto mine = static_cast<std::size_t>(ring_block_of(node.me, node.size()));
  for (std::size_t s = first_shard(mine, shard_count, local_size);
       s < first_shard(mine + 1, shard_count, local_size); ++s) {
    if (shards.length(s) == 0) continue;
    Group rail{{}, layout.my_node};
    for (const auto& members : layout.nodes) {
      rail.ranks.push_back(members[rail_member(s, shard_count, members.size())]);
    }
    // Past 12 shards rails share stages; two such rails share a pair of ranks only on small
    // nodes, where both ranks run them in the same order and tag matching keeps the order.
    const auto stage =
        static_cast<unsigned>(kFirstRailStage + s % (TagSpace::kMaxStage - kFirstRailStage + 1));
    std::byte* data = recv + shards.offset(s) * elem;
    inter.run(context.on(rail, stage), {data, data, shards.length(s), args.type, sum.op});
  }
  if (args.op == ReduceOp::Avg) {
    finish_average(args.type, recv + bounds[mine] * elem, bounds[mine + 1] - bounds[mine],
                   context.group.size());
  }
  ring_all_gather(context.on(node, kGatherStage), recv, args.type, bounds);
}

void hierarchical_leader_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  const std::size_t elem = dtype_size(args.type);
  const AlgorithmInfo& inter =
      inter_algorithm(context, hierarchical_leader_cost, args.count * elem);
  if (trivial_allreduce(context, args)) return;
  const NodeLayout layout = node_layout(context);
  AllreduceArgs sum = args;
  if (sum.op == ReduceOp::Avg) sum.op = ReduceOp::Sum;

  const Group node = layout.node_group();
  const int local_size = node.size();
  const Partition blocks(args.count, static_cast<std::size_t>(local_size));
  std::vector<std::size_t> bounds(static_cast<std::size_t>(local_size) + 1, args.count);
  for (int b = 0; b < local_size; ++b) bounds[std::size_t(b)] = blocks.offset(std::size_t(b));
  auto* recv = static_cast<std::byte*>(args.recv);
  auto block_bytes = [&](int member, std::byte** data) {  // the block member `member` holds
    const auto b = static_cast<std::size_t>(ring_block_of(member, local_size));
    *data = recv + bounds[b] * elem;
    return (bounds[b + 1] - bounds[b]) * elem;
  };
  // Moves each member's block between it and the leader, one message each (gather or scatter).
  auto exchange_with_leader = [&](unsigned stage, bool to_leader) {
    const TagSpace tags = context.tags.with_stage(stage);
    std::vector<Transport::Request> requests;
    for (int m = 1; m < local_size; ++m) {
      if (node.me != 0 && node.me != m) continue;
      std::byte* data = nullptr;
      const std::size_t bytes = block_bytes(m, &data);
      if (bytes == 0) continue;
      const int sender = node.global(to_leader ? m : 0);
      const int peer = node.global(node.me == 0 ? m : 0);
      requests.push_back(node.me == (to_leader ? m : 0)
                             ? context.transport.send(peer, tags.make(sender, 0), data, bytes)
                             : context.transport.recv(peer, tags.make(sender, 0), data, bytes));
    }
    context.transport.wait_all(requests);
  };

  // Intra-node reduce to the leader: reduce-scatter, then each member sends its block in.
  reduce_within_node(context, node, sum, bounds);
  if (intra_is_ring(context)) exchange_with_leader(kGatherStage, true);

  if (node.me == 0) {
    Group leaders{{}, layout.my_node};
    for (const auto& members : layout.nodes) leaders.ranks.push_back(members[0]);
    inter.run(context.on(leaders, kLeaderStage), {recv, recv, args.count, args.type, sum.op});
    if (args.op == ReduceOp::Avg) {
      finish_average(args.type, recv, args.count, context.group.size());
    }
  }

  // Intra-node broadcast: scatter the blocks from the leader, then all-gather them.
  exchange_with_leader(kScatterStage, false);
  ring_all_gather(context.on(node, kBroadcastGatherStage), recv, args.type, bounds);
}

// Cost (Horovod's hierarchical all-reduce, UCC's two-level schedules), G = the most ranks on a
// node, G_min the fewest, N nodes, in the levels' own formulas:
//  - within nodes, COLL_HIER_INTRA=ring: reduce-scatter + all-gather, 2(G-1) steps of M/G
//    (alpha_intra + M/G*beta_intra each) and (G-1)/G*M*gamma; another algorithm: its all-reduce
//    of M over one node, plus the ring all-gather, (G-1) steps of M/G.
//  - hierarchical: the COLL_HIER_INTER formula over N nodes of one rank. Its latency at the shard
//    size M/G, paid c = ceil(G/G_min) times (a rank of the smallest node runs c rails one after
//    another); its bandwidth at M, since the G concurrent rails of M/G share each node's NIC
//    (with no NIC to share, at M/G_min, which a rank of the smallest node carries); its
//    reduction at M/G_min (a rank of the smallest node reduces that much).
//  - hierarchical_leader: the ring reduce-scatter and all-gather plus the leader's gather and
//    scatter, 2(G-1)*alpha_intra + 2(G-1)/G*M*beta_intra more (the leader's G-1 messages each
//    way pass its one port in turn, each holding it alpha: one flow's beta, where the ring's G
//    concurrent flows share a staged node's path), then the COLL_HIER_INTER formula at M among
//    the N leaders.
// With both levels rings: T = 2(G-1)*(alpha_intra + M/G*beta_intra) + 2(N-1)*c*alpha_inter
//   + 2(N-1)*M/N*beta_inter + (G-1)/G*M*gamma + (N-1)/N*M/G_min*gamma.
std::optional<model::Prediction> level_cost(const std::string& name,
                                            const model::CostParams& params,
                                            const model::Shape& shape, double m,
                                            const Tuning& tuning) {
  const AlgorithmInfo* info = find_algorithm(name);
  if (info == nullptr || info->cost == nullptr || name.rfind("hierarchical", 0) == 0) {
    return std::nullopt;
  }
  return info->cost(params, shape, m, tuning);
}

void add_terms(model::Prediction& out, const model::Prediction& part) {
  out.latency_s += part.latency_s;
  out.bandwidth_s += part.bandwidth_s;
  out.reduction_s += part.reduction_s;
}

// The intra-node ring part of both variants: its reduce-scatter and all-gather, G-1 steps of
// M/G each, with every rank of the node sending at once (so a staged node's shared path limits
// them: intra_beta over G flows). Another intra algorithm's all-reduce replaces the
// reduce-scatter.
std::optional<model::Prediction> intra_cost(const model::CostParams& params, int g, double m,
                                            const Tuning& tuning) {
  model::Prediction out;
  if (g < 2) return out;
  int phases = 2;
  const std::string intra = intra_of(tuning);
  if (intra == "ring") {
    out.reduction_s = (g - 1.0) / g * m * params.gamma_s_per_byte;
  } else {
    const auto all_reduce = level_cost(intra, params, model::Shape::uniform(1, g), m, tuning);
    if (!all_reduce) return std::nullopt;
    add_terms(out, *all_reduce);
    phases = 1;
  }
  out.latency_s += phases * (g - 1.0) * params.intra.alpha_s;
  out.bandwidth_s += phases * (g - 1.0) / g * m * model::intra_beta(params, g);
  return out;
}

// Under COLL_HIER_INTER=auto, the composition the run chooses (cheapest_inter).
std::optional<model::Prediction> chosen_composition(LevelledCost cost,
                                                    const model::CostParams& params,
                                                    const model::Shape& shape, double m,
                                                    const Tuning& tuning) {
  return cost(params, shape, m, with_inter(tuning, cheapest_inter(cost, params, shape, m, tuning)));
}

std::optional<model::Prediction> hierarchical_cost(const model::CostParams& params,
                                                   const model::Shape& shape, double m,
                                                   const Tuning& tuning) {
  const std::string inter = inter_of(tuning);
  if (inter == "auto") return chosen_composition(hierarchical_cost, params, shape, m, tuning);
  const int g = shape.max_local(), g_min = shape.min_local(), n = shape.nodes;
  auto out = intra_cost(params, g, m, tuning);
  if (!out) return std::nullopt;
  out->algorithm = "hierarchical";
  const model::Shape rails = model::Shape::uniform(n, 1);
  const auto at_shard = level_cost(inter, params, rails, m / g, tuning);
  const auto at_node = level_cost(inter, params, rails, m, tuning);
  const auto at_rank = level_cost(inter, params, rails, m / g_min, tuning);
  if (!at_shard || !at_node || !at_rank) return std::nullopt;
  const int rounds = (g + g_min - 1) / g_min;
  out->latency_s += rounds * at_shard->latency_s;
  out->bandwidth_s += (params.transport.nic_shared ? at_node : at_rank)->bandwidth_s;
  out->reduction_s += at_rank->reduction_s;
  out->detail = model::detail_text("%s within nodes of up to %d, %s across %d nodes on %d rail(s)",
                                   intra_of(tuning).c_str(), g, inter.c_str(), n, g_min);
  return out;
}

std::optional<model::Prediction> hierarchical_leader_cost(const model::CostParams& params,
                                                          const model::Shape& shape, double m,
                                                          const Tuning& tuning) {
  const std::string inter = inter_of(tuning);
  if (inter == "auto") {
    return chosen_composition(hierarchical_leader_cost, params, shape, m, tuning);
  }
  const int g = shape.max_local(), n = shape.nodes;
  auto out = intra_cost(params, g, m, tuning);
  if (!out) return std::nullopt;
  out->algorithm = "hierarchical_leader";
  // The leader's gather (after a ring reduce-scatter) and scatter: G-1 messages of M/G each
  // way, which pass the leader's one port in turn (alpha each), one flow at a time on a staged
  // path.
  const int leader_phases = g < 2 ? 0 : intra_of(tuning) == "ring" ? 2 : 1;
  out->latency_s += leader_phases * model::phase_alpha(params, g - 1, 0);
  out->bandwidth_s += leader_phases * (g - 1.0) / g * m * model::intra_beta(params, 1);
  const auto leaders = level_cost(inter, params, model::Shape::uniform(n, 1), m, tuning);
  if (!leaders) return std::nullopt;
  add_terms(*out, *leaders);
  out->detail = model::detail_text("%s within nodes of up to %d, %s among %d leaders",
                                   intra_of(tuning).c_str(), g, inter.c_str(), n);
  return out;
}

// Both variants read them. COLL_HIER_INTER=auto: per call, the one of kHierInterCandidates whose
// composition the cost model prices fastest.
constexpr AlgorithmOption kLevelOptions[] = {
    {.variable = kIntraOption,
     .default_value = "ring",
     .description = "the algorithm within nodes (ring: its own reduce-scatter and all-gather)"},
    {.variable = kInterOption,
     .default_value = "auto",
     .description = "the algorithm across nodes; auto: per call, ring or halving_doubling, "
                    "whichever composition the cost model prices fastest"}};

const AlgorithmRegistration kHierarchical(
    {.name = "hierarchical",
     .run = hierarchical_allreduce,
     .summary = "intra-node reduce-scatter, per-shard inter-node all-reduce on every local rank "
                "(rails), intra-node all-gather (COLL_HIER_INTRA, COLL_HIER_INTER)",
     .order = 40,
     .cost = hierarchical_cost,
     .asks_cost_model = true,
     .options = kLevelOptions});
const AlgorithmRegistration kHierarchicalLeader(
    {.name = "hierarchical_leader",
     .run = hierarchical_leader_allreduce,
     .summary = "intra-node reduce, all-reduce among node leaders, intra-node broadcast "
                "(COLL_HIER_INTRA, COLL_HIER_INTER)",
     .order = 41,
     .cost = hierarchical_leader_cost,
     .asks_cost_model = true,
     .options = kLevelOptions});

}  // namespace
}  // namespace coll
