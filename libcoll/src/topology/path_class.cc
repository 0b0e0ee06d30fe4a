// Path classes from the bridge chains that node_topology recorded for each device.
#include "coll/topology/path_class.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace coll::topo {
namespace {

// PCIe switches above a device, nearest first; a switch's upstream and downstream ports count
// once, root ports and host bridges not at all.
std::vector<std::uint64_t> switches_above(const PciDevice& dev) {
  std::vector<std::uint64_t> out;
  for (const PciBridge& b : dev.bridges) {
    if (b.role != BridgeRole::SwitchUpstream && b.role != BridgeRole::SwitchDownstream) continue;
    if (out.empty() || out.back() != b.switch_id) out.push_back(b.switch_id);
  }
  return out;
}

const PciBridge* host_bridge(const PciDevice& dev) {
  if (dev.bridges.empty() || dev.bridges.back().role != BridgeRole::HostBridge) return nullptr;
  return &dev.bridges.back();
}

bool nvlinked(const NodeTopology& topology, int a, int b) {
  for (const GpuLink& link : topology.nvlinks)
    if ((link.a == a && link.b == b) || (link.a == b && link.b == a)) return true;
  return false;
}

// The candidates among which nearest_nic chooses, best first; ties have equal keys.
std::vector<int> candidate_nics(const NodeTopology& topology) {
  std::vector<int> nics = topology.nics();
  bool any_rdma =
      std::any_of(nics.begin(), nics.end(), [&](int n) { return topology.devices[n].is_rdma(); });
  if (any_rdma) std::erase_if(nics, [&](int n) { return !topology.devices[n].is_rdma(); });
  return nics;
}

// The equally good NICs for a GPU.
std::vector<int> best_nics(const NodeTopology& topology, int gpu) {
  auto key = [&](int nic) {
    return std::make_tuple(pci_path_class(topology, gpu, nic), -topology.devices[nic].link_gbps);
  };
  std::vector<int> nics = candidate_nics(topology);
  if (nics.empty()) return nics;
  auto best = key(
      *std::min_element(nics.begin(), nics.end(), [&](int x, int y) { return key(x) < key(y); }));
  std::erase_if(nics, [&](int n) { return key(n) != best; });
  return nics;
}

}  // namespace

std::string_view to_string(PathClass path) {
  switch (path) {
    case PathClass::Loc:
      return "LOC";
    case PathClass::Nvl:
      return "NVL";
    case PathClass::Pix:
      return "PIX";
    case PathClass::Pxb:
      return "PXB";
    case PathClass::Phb:
      return "PHB";
    case PathClass::Sys:
      return "SYS";
  }
  return "?";
}

PathClass pci_path_class(const NodeTopology& topology, int a, int b) {
  if (a == b) return PathClass::Loc;
  const PciDevice& da = topology.devices.at(a);
  const PciDevice& db = topology.devices.at(b);
  // A device known only from sysfs or CUDA has no place in the tree: assume the worst.
  if (da.bridges.empty() || db.bridges.empty()) return PathClass::Sys;

  std::vector<std::uint64_t> sa = switches_above(da), sb = switches_above(db);
  for (size_t i = 0; i < sa.size(); ++i) {
    auto j = std::find(sb.begin(), sb.end(), sa[i]);
    if (j == sb.end()) continue;
    // Switches crossed: those below the common one on each side, plus the common one.
    size_t crossed = i + static_cast<size_t>(j - sb.begin()) + 1;
    return crossed == 1 ? PathClass::Pix : PathClass::Pxb;
  }
  const PciBridge* ha = host_bridge(da);
  const PciBridge* hb = host_bridge(db);
  if (ha && hb && ha->id == hb->id) return PathClass::Phb;
  // Different host bridges of the same CPU: the path turns around in that CPU.
  if (!da.local_numa_nodes.empty() && da.local_numa_nodes == db.local_numa_nodes)
    return PathClass::Phb;
  return PathClass::Sys;
}

PathClass path_class(const NodeTopology& topology, int a, int b) {
  if (a != b && nvlinked(topology, a, b)) return PathClass::Nvl;
  return pci_path_class(topology, a, b);
}

int nearest_nic(const NodeTopology& topology, int gpu) {
  std::vector<int> best = best_nics(topology, gpu);
  if (best.empty()) return -1;
  // Spread GPUs that see the same set of equally good NICs over that set.
  int ordinal = 0;
  for (int other : topology.gpus())
    if (other < gpu && best_nics(topology, other) == best) ++ordinal;
  return best[static_cast<size_t>(ordinal) % best.size()];
}

int nic_for_numa(const NodeTopology& topology, const std::vector<int>& numa_nodes) {
  std::vector<int> nics = candidate_nics(topology);
  auto local = [&](int nic) {
    const std::vector<int>& mine = topology.devices[nic].local_numa_nodes;
    return std::any_of(mine.begin(), mine.end(), [&](int n) {
      return std::find(numa_nodes.begin(), numa_nodes.end(), n) != numa_nodes.end();
    });
  };
  auto key = [&](int nic) {
    return std::make_tuple(!local(nic), -topology.devices[nic].link_gbps);
  };
  auto it =
      std::min_element(nics.begin(), nics.end(), [&](int x, int y) { return key(x) < key(y); });
  return it == nics.end() ? -1 : *it;
}

}  // namespace coll::topo
