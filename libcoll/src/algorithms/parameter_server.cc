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
#include <cstring>
#include <map>
#include <vector>

#include "algorithms/partition.hpp"
#include "algorithms/registry.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

// Group indices of the servers; shard j is served by servers[j].
std::vector<int> choose_servers(const CollectiveContext& context) {
  const Group& group = context.group;
  const int n = group.size();
  const int k = context.tuning.ps_servers <= 0 ? n : std::min(context.tuning.ps_servers, n);
  std::vector<int> servers;
  if (context.tuning.ps_dedicated) {
    for (int index = n - k; index < n; ++index) servers.push_back(index);
    return servers;
  }
  // Rank by (position within its node, node): round-robin over the nodes.
  std::map<int, int> seen_on_node;
  std::vector<std::pair<int, int>> order;  // (local position, group index)
  for (int index = 0; index < n; ++index) {
    const int node = context.node_of_rank[static_cast<std::size_t>(group.global(index))];
    order.emplace_back(seen_on_node[node]++, index);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (int j = 0; j < k; ++j) servers.push_back(order[static_cast<std::size_t>(j)].second);
  std::sort(servers.begin(), servers.end());
  return servers;
}

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

  const std::vector<int> servers = choose_servers(context);
  const Partition shards(args.count, servers.size());
  std::size_t segment = std::max<std::size_t>(1, context.tuning.segment_bytes / elem);
  const std::size_t longest = shards.max_length();
  segment =
      std::max(segment, (longest + TagSpace::kMaxMessages / 2 - 1) / (TagSpace::kMaxMessages / 2));
  const std::size_t segments = (longest + segment - 1) / segment;
  auto piece = [&](std::size_t shard, std::size_t index) {  // (offset, length) in elements
    const std::size_t length = shards.length(shard);
    const std::size_t begin = std::min(length, index * segment);
    return std::pair{shards.offset(shard) + begin, std::min(length, begin + segment) - begin};
  };

  // Worker side: push every segment of every shard served elsewhere, and post its pull.
  const int me = group.me;
  const int my_global = group.global(me);
  std::vector<Transport::Request> pushes, pulls;
  pushes.reserve(servers.size() * segments);
  pulls.reserve(servers.size() * segments);
  int my_shard = -1;
  for (std::size_t j = 0; j < servers.size(); ++j) {
    if (servers[j] == me) {
      my_shard = static_cast<int>(j);
      continue;
    }
    const int server = group.global(servers[j]);
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
    const std::size_t window = std::max(1, context.tuning.window);
    const std::size_t slot_bytes = std::min(segment, longest) * elem;
    auto staging = context.pool.acquire(window * others * slot_bytes);
    auto slot = [&](std::size_t s, std::size_t other) {
      return staging.data() + ((s % window) * others + other) * slot_bytes;
    };
    auto peer = [&](std::size_t other) {  // other ranks by group index, skipping this one
      return group.global(static_cast<int>(other) < me ? static_cast<int>(other)
                                                       : static_cast<int>(other) + 1);
    };
    std::vector<Transport::Request> incoming(window * others);
    auto post = [&](std::size_t s) {
      const auto [offset, length] = piece(shard, s);
      for (std::size_t o = 0; o < others; ++o) {
        incoming[(s % window) * others + o] = context.transport.recv(
            peer(o), context.tags.make(peer(o), push_message(s)), slot(s, o), length * elem);
      }
    };
    std::size_t mine = 0;  // segments of this server's shard
    while (mine < segments && piece(shard, mine).second > 0) ++mine;
    results.reserve(mine * others);
    for (std::size_t s = 0; s < std::min(window, mine); ++s) post(s);
    for (std::size_t s = 0; s < mine; ++s) {
      context.transport.wait_all(std::span(incoming).subspan((s % window) * others, others));
      const auto [offset, length] = piece(shard, s);
      std::byte* target = recv + offset * elem;
      // In place, `send` is `target`: it is the first operand, read before being overwritten.
      reduce(args.type, args.op, target, send + offset * elem, slot(s, 0), length);
      for (std::size_t o = 1; o < others; ++o) {
        reduce(args.type, args.op, target, target, slot(s, o), length);
      }
      if (args.op == ReduceOp::Avg) finish_average(args.type, target, length, n);
      if (s + window < mine) post(s + window);  // this segment's slots are free again
      for (std::size_t o = 0; o < others; ++o) {
        results.push_back(context.transport.send(
            peer(o), context.tags.make(my_global, pull_message(s)), target, length * elem));
      }
    }
  }
  context.transport.wait_all(pulls);
  context.transport.wait_all(pushes);
  context.transport.wait_all(results);
}

const AlgorithmRegistration kParameterServer(
    {"ps", parameter_server_allreduce,
     "parameter server: shards pushed to k servers (COLL_PS_SERVERS, default every rank), "
     "summed there, pulled back; busbw is not nccl-tests'",
     30, /*standard_busbw=*/false});

}  // namespace
}  // namespace coll
