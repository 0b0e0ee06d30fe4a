// What each rank tells rank 0 about itself: its RankInfo, the transports its communicator chose
// (Comm::describe) and its node's topology. Gathered over Comm::send/recv.
#pragma once

#include <string>
#include <vector>

#include "coll/comm.hpp"
#include "coll/topology/node_topology.hpp"
#include "coll/topology/rank_info.hpp"

namespace colltopo {

struct RankReport {
  coll::topo::RankInfo info;
  std::string comm;  // Comm::describe()
  coll::topo::NodeTopology topology;
};

// This rank's report: discover_local (CUDA ordinals only with `cuda`), then make_rank_info with
// the GPU this rank would use (local rank modulo the GPUs CUDA shows; none without `cuda`).
RankReport make_report(const coll::Comm& comm, bool cuda);

// Collective: rank 0 gets every rank's report in rank order, the others an empty vector.
std::vector<RankReport> gather_reports(coll::Comm& comm, const RankReport& mine);

// Sends / receives one length-prefixed message (point-to-point, blocking).
void send_text(coll::Comm& comm, const std::string& text, int peer, std::uint32_t tag);
std::string recv_text(coll::Comm& comm, int peer, std::uint32_t tag);

}  // namespace colltopo
