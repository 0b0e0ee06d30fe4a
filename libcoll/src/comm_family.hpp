// What communicators split from one another share (CommFamily); made once per job by
// Comm::from_environment, from_store or from_exchange.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "coll/buffer_pool.hpp"
#include "coll/config.hpp"
#include "coll/topology/rank_map.hpp"
#include "collectives/context_ids.hpp"
#include "core/cost_clock.hpp"
#include "core/progress_engine.hpp"
#include "transport/node_resources.hpp"
#include "transport/transport.hpp"

namespace coll {

// What communicators split from one another share: the transport (UCX is used from one thread
// at a time, so also the progress engine), what the ranks of a node share besides messages, the
// bootstrap and node map, the staging pool, and the tag contexts that keep their messages apart.
struct CommFamily {
  Config config;
  std::unique_ptr<Bootstrap> bootstrap;
  topo::RankMap rank_map;
  std::vector<std::string> kernel_of_rank;  // the boot and machine ids in its host identity
  std::vector<std::string> host_name_of_rank;
  std::unique_ptr<Transport> transport;
  NodeResources node;
  bool emulated_links = false;              // the transport emulates the links between nodes
  CostClock* clock = &steady_cost_clock();  // the links' clock (Connection::clock)
  BufferPool pool;
  ContextIds contexts;
  // Started by the first asynchronous call; from then on every transport call runs on its
  // thread. Declared last: it stops (running what is queued) before the transport goes.
  std::unique_ptr<ProgressEngine> engine;

  // Bootstrap → node map → transport.
  CommFamily(Config configuration, std::unique_ptr<Bootstrap> boot);
  ~CommFamily();

  int ranks_sharing_kernel(int rank) const;
  // The transport's links and what the node shares: "ucx: 1 peer(s) over sm,self, 2 over tcp
  // sockets(lo), send buffer 256K; cross-memory reads from 1 peer(s); node slots".
  std::string links_text() const;

 private:
  void connect();
  void build_rank_map();
};

}  // namespace coll
