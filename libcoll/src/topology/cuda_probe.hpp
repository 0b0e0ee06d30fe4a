// CUDA device ordinals through the CUDA driver, loaded at run time so that libcoll neither needs
// CUDA to build nor to run. Internal to libcoll's topology code.
#pragma once

#include <string>
#include <vector>

#include "coll/topology/node_topology.hpp"

namespace coll::topo::detail {

struct CudaDevice {
  int ordinal = -1;
  std::string bus_id;  // normalized, "0000:3b:00.0"
  std::string name;    // "Tesla P40"
};

// The devices this process sees (CUDA_VISIBLE_DEVICES applies). Empty without libcuda.so.1;
// when the driver is there but fails, empty plus a warning.
std::vector<CudaDevice> probe_cuda_devices(std::vector<std::string>& warnings);

// Sets cuda_index on the GPUs with these bus ids; a CUDA device hwloc did not show becomes a GPU
// of unknown locality, with a warning.
void apply_cuda_devices(NodeTopology& node, const std::vector<CudaDevice>& cuda);

// "0000:3B:00.0", "00000000:3b:00.0" or "3b:00.0" -> "0000:3b:00.0"; "" if it is not a bus id.
std::string normalize_bus_id(const std::string& text);

}  // namespace coll::topo::detail
