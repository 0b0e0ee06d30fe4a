// What the local machine tells us beyond hwloc: host identity, NIC link layer and speed from
// sysfs, and NICs that hwloc cannot place. Internal to libcoll's topology code.
#pragma once

#include <hwloc.h>

#include <string>

#include "coll/topology/node_topology.hpp"

namespace coll::topo::detail {

// Adds info attributes hwloc does not record, so that the reader (and any XML exported from this
// topology) sees them: CollPort<n>LinkLayer and CollPort<n>Rate on OpenFabrics devices (sysfs
// ports/<n>/link_layer and rate) and CollSpeedMbps on network interfaces (when positive).
void annotate_from_sysfs(hwloc_topology_t topology, const std::string& sysfs_root = "/sys");

// Adds NICs only sysfs shows: verbs devices outside any visible PCI device (soft-RoCE, hidden
// PCI) and, when no NIC was found at all, the non-loopback network interfaces that are up. Their
// locality is unknown, so their paths count as SYS; each one adds a warning.
void add_sysfs_only_nics(NodeTopology& node, const std::string& sysfs_root = "/sys");

// First line of a file without trailing whitespace; "" if it cannot be read.
std::string read_line(const std::string& path);

}  // namespace coll::topo::detail
