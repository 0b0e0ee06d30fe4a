// RankInfo: what each rank publishes about itself through the bootstrap so that every rank can
// build the same RankMap. Serialized as short "key=value" text.
#pragma once

#include <string>
#include <string_view>

#include "coll/topology/node_topology.hpp"

namespace coll::topo {

struct RankInfo {
  int rank = -1;
  std::string host_identity;  // NodeTopology::host_identity
  int node_override = -1;     // COLL_NODE, -1 unless set
  std::string process_id;     // unique per process (pid plus a random nonce)
  std::string binding;        // CPU list of the rank's binding, "" if unknown
  int gpu = -1;               // CUDA ordinal, -1 without GPU
  std::string gpu_bus_id;     // "0000:04:00.0", "" without GPU
  std::string nic;            // the NIC this rank should use ("mlx5_0"), "" if none

  // Text that deserialize() turns back into an equal RankInfo.
  std::string serialize() const;
  // Throws coll::Error(InvalidArgument) on malformed text, a negative rank, or an empty host or
  // process id.
  static RankInfo deserialize(std::string_view text);

  bool operator==(const RankInfo&) const = default;
};

// COLL_NODE's value: a node number >= 0; nullptr or "" means unset (-1). Throws
// coll::Error(InvalidArgument) for anything else.
int parse_node_override(const char* value);

// This process's id: the same for every call in one process, different between processes.
const std::string& this_process_id();

// The RankInfo of the calling process for `rank`, using `gpu` (a CUDA ordinal, or -1) and
// COLL_NODE from the environment. The NIC is the GPU's nearest, or else one local to the
// binding.
RankInfo make_rank_info(int rank, const NodeTopology& topology, int gpu = -1);

}  // namespace coll::topo
