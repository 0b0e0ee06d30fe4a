// Turns a loaded hwloc topology into a NodeTopology. Internal to libcoll's topology code.
#pragma once

#include <hwloc.h>

#include <string>

#include "coll/topology/node_topology.hpp"

namespace coll::topo::detail {

// CPUs, NUMA nodes, PCI devices with their bridges and locality, and NVLink pairs from hwloc's
// "NVLinkBandwidth" distances. Leaves source, host identity and binding to the caller.
NodeTopology read_hwloc(hwloc_topology_t topology);

// One PCI function: kind, name, NIC kind and speed, locality and bridge chain.
PciDevice read_pci_device(hwloc_topology_t topology, hwloc_obj_t pci);

// Leading number of "56 Gb/sec (4X FDR)" or "10000"; 0 if none or negative.
double leading_number(const std::string& text);

// hwloc bitmap as a list ("0-3,8") and in hwloc's hex form ("0x0000000f").
std::string bitmap_list(hwloc_const_bitmap_t bitmap);
std::string bitmap_hex(hwloc_const_bitmap_t bitmap);

}  // namespace coll::topo::detail
