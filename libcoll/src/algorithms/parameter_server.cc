// Parameter server: the buffer is cut into k shards, one per server rank. Every rank pushes
// each shard it does not serve to that shard's server, each server sums its shard, and every
// rank pulls the summed shards back (MXNet kvstore / BytePS with co-located servers).
//
// Servers (COLL_PS_SERVERS=k, 0 meaning every rank): by default spread over the nodes, the
// first local rank of every node first, then the second, and so on, so that k = number of nodes
// puts one server on each node. COLL_PS_DEDICATED=1 makes the last k ranks the servers (a
// node launched only to serve). Server ranks are still members of the all-reduce: they
// contribute their own input and receive the result like every other rank.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/parameter_server_schedule.hpp"
#include "algorithms/partition.hpp"
#include "algorithms/pipeline.hpp"
#include "algorithms/registry.hpp"
#include "reduce/reducer.hpp"

namespace coll {

ServerPlacement server_placement(const Tuning& tuning) {
  return {static_cast<int>(algorithm_option_number(tuning, "COLL_PS_SERVERS")),
          algorithm_option_number(tuning, "COLL_PS_DEDICATED") == 1};
}

namespace {

// Message indices: 2 * segment for a push, 2 * segment + 1 for the pulled result, so a rank
// that both serves and pushes to another server never reuses a tag towards one peer.
std::uint32_t push_message(std::size_t segment) {
  return static_cast<std::uint32_t>(2 * segment);
}
std::uint32_t pull_message(std::size_t segment) {
  return static_cast<std::uint32_t>(2 * segment + 1);
}

void parameter_server_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  const Group& group = context.group;
  const int n = group.size();
  const std::size_t elem = dtype_size(args.type);
  auto* recv = static_cast<std::byte*>(args.recv);
  const auto* send = static_cast<const std::byte*>(args.send);
  if (trivial_allreduce(context, args)) return;

  const std::vector<int> node_of_member = context.node_of_member();
  const std::vector<int> servers = ps_servers(node_of_member, server_placement(context.tuning));
  const Partition shards(args.count, servers.size());
  // A push and a pull message per segment.
  const Segmentation cut = Segmentation::of(context, elem, shards.max_length(), 2);
  const std::size_t segments = cut.segments();
  auto piece = [&](std::size_t shard, std::size_t index) {  // (offset, length) in elements
    const Piece part = cut.piece(shards.length(shard), index);
    return std::pair{shards.offset(shard) + part.offset, part.length};
  };

  // Worker side: push every segment of every shard served elsewhere, and post its pull.
  const int me = group.me;
  const int my_global = group.global(me);
  std::vector<Transport::Request> pushes, pulls;
  pushes.reserve(servers.size() * segments);
  pulls.reserve(servers.size() * segments);
  const auto served_here = std::find(servers.begin(), servers.end(), me);
  const int my_shard =
      served_here == servers.end() ? -1 : static_cast<int>(served_here - servers.begin());
  std::vector<int> others_serving;
  for (const int server : servers) {
    if (server != me) others_serving.push_back(server);
  }
  for (const int server_member : push_order(others_serving, node_of_member, me)) {
    const auto j = static_cast<std::size_t>(
        std::lower_bound(servers.begin(), servers.end(), server_member) - servers.begin());
    const int server = group.global(server_member);
    for (std::size_t s = 0; s < segments; ++s) {
      const auto [offset, length] = piece(j, s);
      if (length == 0) break;
      pulls.push_back(context.transport.recv(server, context.tags.make(server, pull_message(s)),
                                             recv + offset * elem, length * elem));
      pushes.push_back(context.transport.send(server, context.tags.make(my_global, push_message(s)),
                                              send + offset * elem, length * elem));
    }
  }

  // Server side: receive a window of segments from the other n - 1 ranks into staging, sum
  // each segment in a fixed order (own input, then the others by group index) whatever the
  // arrival order, and send the result to every other rank.
  std::vector<Transport::Request> results;
  if (my_shard >= 0) {
    const auto shard = static_cast<std::size_t>(my_shard);
    const std::size_t others = static_cast<std::size_t>(n - 1);
    const std::size_t window = window_of(context.tuning);
    const std::size_t slot_bytes = cut.elems() * elem;
    auto staging = context.pool.acquire(window * others * slot_bytes);
    auto slot = [&](std::size_t s, std::size_t other) {
      return staging.data() + ((s % window) * others + other) * slot_bytes;
    };
    auto member = [&](std::size_t other) {  // other ranks by group index, skipping this one
      return static_cast<int>(other) < me ? static_cast<int>(other) : static_cast<int>(other) + 1;
    };
    auto peer = [&](std::size_t other) { return group.global(member(other)); };
    // The others in the order this server takes their pushes and sends their pulls.
    std::vector<int> other_members;
    for (std::size_t o = 0; o < others; ++o) other_members.push_back(member(o));
    std::vector<std::size_t> turn;
    for (const int m : pull_order(other_members, node_of_member)) {
      turn.push_back(static_cast<std::size_t>(m < me ? m : m - 1));
    }
    std::vector<Transport::Request> incoming(window * others);
    auto post = [&](std::size_t s) {
      const auto [offset, length] = piece(shard, s);
      for (std::size_t i = 0; i < others; ++i) {
        const std::size_t o = turn[i];
        incoming[(s % window) * others + i] = context.transport.recv(
            peer(o), context.tags.make(peer(o), push_message(s)), slot(s, o), length * elem);
      }
    };
    const std::size_t mine = cut.segments_of(shards.length(shard));
    results.reserve(mine * others);
    auto finish = [&](std::size_t s) {
      context.transport.wait_all(std::span(incoming).subspan((s % window) * others, others));
      const auto [offset, length] = piece(shard, s);
      std::byte* target = recv + offset * elem;
      // In place, `send` is `target`: it is the first operand, read before being overwritten.
      context.reduce(args.type, args.op, target, send + offset * elem, slot(s, 0), length);
      for (std::size_t o = 1; o < others; ++o) {
        context.reduce(args.type, args.op, target, target, slot(s, o), length);
      }
      if (args.op == ReduceOp::Avg) finish_average(args.type, target, length, n);
      for (const std::size_t o : turn) {
        results.push_back(context.transport.send(
            peer(o), context.tags.make(my_global, pull_message(s)), target, length * elem));
      }
    };
    run_windowed(mine, window, post, finish);
  }
  context.transport.wait_all(pulls);
  context.transport.wait_all(pushes);
  context.transport.wait_all(results);
}

// One push phase (the pull phase mirrors it): what its busiest ports, NICs and staging paths
// carry, and the busiest rank's alphas.
struct PushPhase {
  std::vector<double> port_out, port_in;  // seconds on each rank's port, each direction
  std::vector<double> nic_out, nic_in;    // bytes through each node's NIC, each direction
  std::vector<double> staged;             // intra-node bytes through each node's host staging path
  double work = 0;                        // the busiest rank's alphas in the phase
  int messages = 1;                       // and how many messages they are
};

// Rank r sends a shard to every server s != r. Counted per node (ranks L, servers S of a node) so
// that it costs O(p), not O(p k): a rank sends S or S - 1 shards inside its node and k - S
// across; a server receives L - 1 inside, p - L across.
PushPhase push_phase(const model::CostParams& params, const model::Shape& shape,
                     const std::vector<int>& servers, double shard) {
  const int p = shape.ranks;
  const int k = static_cast<int>(servers.size());
  const auto nodes = static_cast<std::size_t>(shape.nodes);
  std::vector<int> local(nodes), served(nodes);
  std::vector<bool> is_server(static_cast<std::size_t>(p));
  for (const int s : servers) {
    is_server[static_cast<std::size_t>(s)] = true;
    ++served[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(s)])];
  }
  for (int r = 0; r < p; ++r) {
    ++local[static_cast<std::size_t>(shape.node_of_rank[static_cast<std::size_t>(r)])];
  }
  PushPhase phase{std::vector<double>(static_cast<std::size_t>(p)),
                  std::vector<double>(static_cast<std::size_t>(p)), std::vector<double>(nodes),
                  std::vector<double>(nodes), std::vector<double>(nodes)};
  auto busiest = [&](double alphas, int many) {
    if (alphas > phase.work) {
      phase.work = alphas;
      phase.messages = many;
    }
  };
  for (int r = 0; r < p; ++r) {
    const auto rank = static_cast<std::size_t>(r);
    const auto node = static_cast<std::size_t>(shape.node_of_rank[rank]);
    const int near = served[node] - (is_server[rank] ? 1 : 0), far = k - served[node];
    phase.port_out[rank] = near * shard * params.intra.beta_s_per_byte;
    busiest(model::phase_alpha(params, near, far), near + far);
    phase.staged[node] += near * shard;
    // Bytes to other nodes pass the node's NIC, or where there is none the rank's own port.
    const double far_out = far * shard;
    if (params.transport.nic_shared) {
      phase.nic_out[node] += far_out;
    } else {
      phase.port_out[rank] += far_out * params.inter.beta_s_per_byte;
    }
    if (is_server[rank]) {
      phase.port_in[rank] = (local[node] - 1) * shard * params.intra.beta_s_per_byte;
      busiest(model::phase_alpha(params, local[node] - 1, p - local[node]), p - 1);
      const double far_in = (p - local[node]) * shard;
      if (params.transport.nic_shared) {
        phase.nic_in[node] += far_in;
      } else {
        phase.port_in[rank] += far_in * params.inter.beta_s_per_byte;
      }
    }
  }
  return phase;
}

double top(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end());
}

// The pull mirrors the push in the opposite direction (a server sends back what it received),
// and the run pipelines them segment by segment (a segment's pull while the next ones are
// pushed): the busiest direction of a port or NIC carries its push and pull bytes, and no
// less than S + 1 segment times of the busier phase pass (S segments: unpipelined, S = 1, that
// is push then pull); the node's staging path carries both phases.
struct PushAndPull {
  double both = 0;         // the busiest port or NIC, both phases' bytes
  double phase_bytes = 0;  // the busier phase's busiest port or NIC
  double staging = 0;      // the busiest staging path, one phase
  bool nic_bound = false;  // a NIC, not a port, bounds a phase
};

PushAndPull push_and_pull(const model::CostParams& params, const PushPhase& phase) {
  std::vector<double> port_both(phase.port_out.size()), nic_both(phase.nic_out.size());
  for (std::size_t r = 0; r < port_both.size(); ++r) {
    port_both[r] = phase.port_out[r] + phase.port_in[r];
  }
  for (std::size_t n = 0; n < nic_both.size(); ++n) {
    nic_both[n] = phase.nic_out[n] + phase.nic_in[n];
  }
  const double ports = std::max(top(phase.port_out), top(phase.port_in));
  const double nics =
      std::max(top(phase.nic_out), top(phase.nic_in)) * params.inter.beta_s_per_byte;
  PushAndPull out;
  out.staging = top(phase.staged) * params.staging_beta_s_per_byte;
  out.both = std::max(top(port_both), top(nic_both) * params.inter.beta_s_per_byte);
  out.phase_bytes = std::max(ports, nics);
  out.nic_bound = nics > ports;
  return out;
}

// The busiest rank's alphas in both phases, and its last segment of pulls: its work on them,
// then their bytes.
struct BusiestRank {
  double latency_s = 0;
  double last_pulls_s = 0;
};

BusiestRank busiest_rank(const model::CostParams& params, const PushPhase& phase,
                         const PushAndPull& bytes, double segments, double bandwidth_s, int p,
                         int k) {
  const double work = phase.work;
  const int messages = phase.messages;
  BusiestRank out{2 * work, work + bytes.phase_bytes / segments};
  if (params.charging.alpha_overlaps_bytes) {
    // The busiest rank works on its S x c messages of a phase one at a time while the links
    // carry the others' bytes: both phases last the longer of its work and the bytes, plus, at
    // each phase's edge, the messages the rank served last takes at once (every server serves in
    // one order: k of them, k - 1 where every rank serves), each a message's alpha or its bytes,
    // whichever is shorter (one server, one segment: 2 max(alpha + c b, c alpha + b), where the
    // exchange above pays 2 (c alpha + c b); every rank a server: that exchange).
    const double alpha = work / messages, message = bytes.phase_bytes / (segments * messages);
    const int at_once = p > k ? k : k - 1;
    const double edge = at_once * std::min(alpha, message);
    out.latency_s = std::max(0.0, 2 * segments * work - bandwidth_s) + 2 * edge;
    out.last_pulls_s = std::max(work + at_once * message, alpha + bytes.phase_bytes / segments);
  }
  return out;
}

// Back to back, the busiest rank (a server) takes the next all-reduce's pushes while it still
// sends this one's pulls: those of the peers it served first come in during its last
// segment's pulls. Not those of the rank every server serves last: it takes its k pulls one
// after another, then pushes to the k servers, so the server it pushes to last waits 2k - 1
// messages after its own last pull went out (one server: all but one of its c messages; k =
// p / 2 servers and more: none, as the emulated links show).
// No more than the busiest link leaves free: a chain of all-reduces keeps it busy with each
// one's bytes (a NIC carries a node's pushes and the pulls to other nodes in one direction).
double back_to_back_lead(const PushPhase& phase, const PushAndPull& bytes, double segments,
                         double last_pulls_s, double total_s, int k) {
  const double busiest_link = std::max({bytes.both, 2 * bytes.staging, segments * phase.work});
  const int messages = phase.messages;
  const double overlapped = std::max(0.0, (messages - 2.0 * k + 1) / messages * last_pulls_s);
  return std::min(overlapped, std::max(0.0, total_s - busiest_link));
}

// Cost (BytePS, OSDI'20 section 4): push and pull, pipelined; each of the k servers owns M/k. Every
// rank sends M/k to each other server and every server receives M/k from each other rank; the
// messages of one rank are posted back to back and pay alpha each (Thakur et al.'s linear
// exchange), bytes are bounded by the busiest rank port, node NIC and node staging path (the
// node's intra-node bytes, when the parameters have one). Flat, k = p:
//   T = 2(p-1)*alpha + 2(p-1)/p*M*beta + (p-1)/p*M*gamma, as the ring;
// one server of two ranks, S segments: M*beta*(1 + 1/S), where a push, then a pull took 2M*beta.
std::optional<model::Prediction> parameter_server_cost(const model::CostParams& params,
                                                       const model::Shape& shape, double m,
                                                       const Tuning& tuning) {
  model::Prediction out{"ps"};
  const int p = shape.ranks;
  if (p < 2) return out;
  const ServerPlacement placement = server_placement(tuning);
  const std::vector<int> servers = ps_servers(shape.node_of_rank, placement);
  const int k = static_cast<int>(servers.size());
  const double shard = m / k;
  const PushPhase phase = push_phase(params, shape, servers, shard);
  const PushAndPull bytes = push_and_pull(params, phase);
  const double segments = tuning.segments_in(shard, shape.nodes > 1);
  out.bandwidth_s =
      std::max({bytes.both, (1 + 1 / segments) * bytes.phase_bytes, 2 * bytes.staging});
  out.reduction_s = (p - 1) * shard * params.gamma_s_per_byte;
  const BusiestRank busiest = busiest_rank(params, phase, bytes, segments, out.bandwidth_s, p, k);
  out.latency_s = busiest.latency_s;
  out.lead_s = back_to_back_lead(phase, bytes, segments, busiest.last_pulls_s, out.total_s(), k);
  out.detail = model::detail_text("k=%d %s servers, push + pull of M/k shards%s", k,
                                  placement.dedicated ? "dedicated" : "co-located",
                                  bytes.nic_bound ? ", NIC-bound" : "");
  return out;
}

// nccl-tests' busbw does not describe a parameter server: collbench reports instead the bytes
// each worker moves (pushes plus pulls to the k-1 other shards) per byte of the vector.
BusFactor parameter_server_bus_factor(int ranks, const Tuning& tuning) {
  const int k = ps_server_count(ranks, server_placement(tuning));
  return {k > 1 ? 2.0 * (k - 1) / k : 0.0, false,
          "wkbw* = bytes each worker moves / time = algbw * 2(k-1)/k, k = " + std::to_string(k) +
              " servers: NOT nccl-tests' busbw"};
}

constexpr AlgorithmOption kServerOptions[] = {
    {.variable = "COLL_PS_SERVERS",
     .default_value = "0",
     .description = "parameter-server shards, k (0: every rank)",
     .integer = true,
     .min = 0,
     .max = 1 << 16},
    {.variable = "COLL_PS_DEDICATED",
     .default_value = "0",
     .description = "1: the servers are the last k ranks instead of spread over the nodes",
     .integer = true,
     .min = 0,
     .max = 1}};

const AlgorithmRegistration kParameterServer(
    {.name = "ps",
     .run = parameter_server_allreduce,
     .summary = "parameter server: shards pushed to k servers (COLL_PS_SERVERS, default every "
                "rank), summed there, pulled back; busbw is not nccl-tests'",
     .order = 30,
     .cost = parameter_server_cost,
     .bus_factor = parameter_server_bus_factor,
     .options = kServerOptions});

}  // namespace
}  // namespace coll
