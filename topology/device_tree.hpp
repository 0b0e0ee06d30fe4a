// One node's hardware as colltopo shows it: packages, NUMA nodes and cores; the GPUs and NICs
// under their NUMA node with the PCIe bridges and switches between them and the CPU; the path
// class of every GPU/NIC pair; and each GPU's nearest NIC.
#pragma once

#include <string>

#include "coll/tools/json_writer.hpp"
#include "coll/topology/node_topology.hpp"

namespace colltopo {

// "GPU0", "NIC1": the device's position among the node's GPUs or NICs; "dev<i>" otherwise.
std::string device_label(const coll::topo::NodeTopology& node, int device);

// Bridges from the device up to the CPU: "switch 10b5:8796 @0000:02:00.0 > root port ... >
// host bridge"; "unknown" when hwloc could not place the device.
std::string bridge_chain(const coll::topo::PciDevice& device);

// Appends the node's description, each line indented; `title` heads it ("node 0").
void print_node(std::string& out, const coll::topo::NodeTopology& node, const std::string& title);

// The same as one JSON object (the caller opens and closes it).
void json_node(coll::tools::JsonWriter& json, const coll::topo::NodeTopology& node);

}  // namespace colltopo
