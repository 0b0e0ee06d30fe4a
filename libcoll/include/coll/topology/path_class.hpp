// How far apart two devices of one node are, in NCCL's path classes, and which NIC a GPU should
// use. Pure functions of a NodeTopology.
#pragma once

#include <string_view>
#include <vector>

#include "coll/topology/node_topology.hpp"

namespace coll::topo {

// Ordered from nearest to farthest, as in NCCL:
//   Loc  the same device
//   Nvl  NVLink, directly or through NVSwitches (from hwloc's "NVLinkBandwidth" distances)
//   Pix  through at most one PCIe switch
//   Pxb  through several PCIe switches, without the host bridge
//   Phb  through a PCIe host bridge, or between host bridges of the same CPU (NUMA node set)
//   Sys  across the SMP interconnect between NUMA nodes, or where a location is unknown
enum class PathClass { Loc, Nvl, Pix, Pxb, Phb, Sys };

std::string_view to_string(PathClass path);  // "LOC", "NVL", "PIX", "PXB", "PHB", "SYS"

// The PCIe/CPU path between devices a and b (indices into topology.devices); NVLink ignored.
PathClass pci_path_class(const NodeTopology& topology, int a, int b);

// Nvl for GPU pairs joined by NVLink, otherwise pci_path_class.
PathClass path_class(const NodeTopology& topology, int a, int b);

// The NIC (device index) a GPU should use, -1 if the node has none. RDMA NICs (InfiniBand,
// RoCE) are preferred over plain Ethernet whenever there is one; then the nearest path, then the
// fastest port; GPUs with equally good choices are spread over them in GPU order.
int nearest_nic(const NodeTopology& topology, int gpu);

// The NIC for a rank without a GPU, bound to the given NUMA nodes (empty: unknown): RDMA first,
// then one local to those NUMA nodes, then the fastest. -1 if none.
int nic_for_numa(const NodeTopology& topology, const std::vector<int>& numa_nodes);

}  // namespace coll::topo
