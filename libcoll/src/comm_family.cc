// CommFamily: bootstrap → node map → transport, shared by a communicator and its splits.
#include "comm_family.hpp"

#include <algorithm>

#include "coll/algorithms.hpp"
#include "core/log.hpp"
#include "transport/transport_registry.hpp"

namespace coll {

CommFamily::CommFamily(Config configuration, std::unique_ptr<Bootstrap> boot)
    : config(std::move(configuration)), bootstrap(std::move(boot)) {
  try {
    check_algorithm_options(config.tuning);  // a tool's Config, as the variables are checked
    connect();
  } catch (...) {
    // Peers may wait for this rank in an exchange it will not make (and fail after
    // COLL_TIMEOUT): a bootstrap that would wait for them as it closes is told not to.
    bootstrap->abandon();
    throw;
  }
}

void CommFamily::connect() {
  build_rank_map();
  const int me = bootstrap->rank();
  TransportOptions options;
  options.timeout_s = config.timeout_s;
  // Cores are shared by every rank of this kernel: emulated nodes, and emulated hosts or
  // containers with hostnames of their own.
  options.ranks_on_this_host = ranks_sharing_kernel(me);
  options.threads_per_rank = 1 + config.compute_threads;
  options.host_of_rank = rank_map.host_of_rank;
  if (options.spans_hosts()) options.host_name_of_rank = host_name_of_rank;
  log_line(LogLevel::Info, me, "transport '" + config.transport + "'");
  Connection connection =
      make_transport(config.transport, *bootstrap, rank_map.node_of_rank, options);
  transport = std::move(connection.transport);
  node = std::move(connection.node);
  emulated_links = connection.emulated_links;
  if (connection.clock) clock = connection.clock;
  if (log_enabled(LogLevel::Info)) {
    log_line(LogLevel::Info, me,
             "communicator: " + std::to_string(bootstrap->size()) + " ranks on " +
                 std::to_string(rank_map.num_nodes()) + " node(s), node " +
                 std::to_string(rank_map.node_of_rank[static_cast<std::size_t>(me)]) +
                 ", bootstrap " + bootstrap->describe() + ", " + links_text() + ", algorithm " +
                 config.algorithm + ", timeout " + std::to_string(config.timeout_s) + " s");
  }
}

// After a failure the job's peers may be gone or cut off: a bootstrap that would wait for them
// as it closes (MPI_Finalize) is told not to.
CommFamily::~CommFamily() {
  engine.reset();
  if (transport && transport->failed()) bootstrap->abandon();
}

int CommFamily::ranks_sharing_kernel(int rank) const {
  return static_cast<int>(std::count(kernel_of_rank.begin(), kernel_of_rank.end(),
                                     kernel_of_rank[static_cast<std::size_t>(rank)]));
}

std::string CommFamily::links_text() const {
  std::string text = transport->describe();
  const int me = bootstrap->rank();
  int readable = 0;
  for (int peer = 0; node.peer_memory && peer < bootstrap->size(); ++peer)
    readable += peer != me && node.peer_memory->connects(me, peer);
  if (readable > 0) text += "; cross-memory reads from " + std::to_string(readable) + " peer(s)";
  if (node.node_slots) text += "; node slots";
  return text;
}

// Every rank publishes its host and COLL_NODE; nodes are (host, COLL_NODE) pairs, so one
// machine can emulate several nodes but two machines never form one.
void CommFamily::build_rank_map() {
  topo::RankInfo mine;
  mine.rank = bootstrap->rank();
  mine.host_identity = topo::local_host_identity();
  mine.node_override = config.node.value_or(-1);
  mine.process_id = topo::this_process_id();
  std::vector<topo::RankInfo> all;
  for (const auto& text : bootstrap->allgather("rank-info", mine.serialize())) {
    all.push_back(topo::RankInfo::deserialize(text));
    const std::string& host = all.back().host_identity;
    kernel_of_rank.push_back(host.substr(std::min(host.find('/'), host.size())));
    host_name_of_rank.push_back(host.substr(0, host.find('/')));
  }
  rank_map = topo::build_rank_map(all);
}

}  // namespace coll
