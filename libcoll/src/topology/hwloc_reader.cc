// Reads the CPU side, the PCI devices and the NVLink matrix of a loaded hwloc topology.
#include "topology/hwloc_reader.hpp"

#include <hwloc/distances.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace coll::topo::detail {
namespace {

std::string trimmed(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

void read_cpus(hwloc_topology_t topology, NodeTopology& node) {
  node.cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  node.pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, p));) {
    Package pkg;
    pkg.os_index = static_cast<int>(p->os_index);
    pkg.cpu_model = trimmed(hwloc_obj_get_info_by_name(p, "CPUModel"));
    pkg.cpulist = bitmap_list(p->cpuset);
    pkg.cores = hwloc_get_nbobjs_inside_cpuset_by_type(topology, p->cpuset, HWLOC_OBJ_CORE);
    node.packages.push_back(pkg);
  }
  for (hwloc_obj_t n = nullptr;
       (n = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, n));) {
    NumaNode numa;
    numa.os_index = static_cast<int>(n->os_index);
    numa.memory_bytes = n->attr->numanode.local_memory;
    numa.cpulist = bitmap_list(n->cpuset);
    if (hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, n))
      numa.package = static_cast<int>(pkg->os_index);
    node.numa_nodes.push_back(numa);
  }
}

// The PCI device an object belongs to (itself, or the parent of an OS device).
hwloc_obj_t owning_pci(hwloc_obj_t obj) {
  while (obj && obj->type == HWLOC_OBJ_OS_DEVICE) obj = obj->parent;
  return obj && obj->type == HWLOC_OBJ_PCI_DEVICE ? obj : nullptr;
}

// hwloc's NVML backend lists GPUs (nvmlN OS devices) and, on NVSwitch machines, the NVSwitch
// PCI devices; values are MB/s. GPU pairs are linked directly, or through switches that both
// reach (then the pair gets the sum over shared switches of the smaller of the two links).
void read_nvlinks(hwloc_topology_t topology, const std::map<hwloc_obj_t, int>& index_of,
                  NodeTopology& node) {
  constexpr unsigned kSlots = 8;
  hwloc_distances_s* matrices[kSlots];
  unsigned count = kSlots;
  if (hwloc_distances_get_by_name(topology, "NVLinkBandwidth", &count, matrices, 0) != 0) return;
  count = std::min(count, kSlots);
  std::map<std::pair<int, int>, GpuLink> links;
  for (unsigned m = 0; m < count; ++m) {
    const hwloc_distances_s* d = matrices[m];
    const unsigned n = d->nbobjs;
    std::vector<int> dev(n, -1);
    for (unsigned i = 0; i < n; ++i)
      if (hwloc_obj_t pci = owning_pci(d->objs[i]); pci && index_of.count(pci))
        dev[i] = index_of.at(pci);
    auto gpu = [&](unsigned i) {
      return dev[i] >= 0 && node.devices[dev[i]].kind == DeviceKind::Gpu;
    };
    auto bw = [&](unsigned i, unsigned j) { return static_cast<double>(d->values[i * n + j]); };
    for (unsigned i = 0; i < n; ++i) {
      for (unsigned j = i + 1; j < n; ++j) {
        if (!gpu(i) || !gpu(j) || dev[i] == dev[j]) continue;
        double direct = std::min(bw(i, j), bw(j, i));
        double switched = 0;
        for (unsigned k = 0; k < n; ++k)
          if (k != i && k != j && !gpu(k) && dev[k] >= 0)
            switched += std::min(std::min(bw(i, k), bw(k, i)), std::min(bw(j, k), bw(k, j)));
        if (direct <= 0 && switched <= 0) continue;
        GpuLink link;
        link.a = std::min(dev[i], dev[j]);
        link.b = std::max(dev[i], dev[j]);
        link.through_switch = direct <= 0;
        link.gbytes_per_s = (direct > 0 ? direct : switched) / 1000.0;
        links[{link.a, link.b}] = link;
      }
    }
    hwloc_distances_release(topology, matrices[m]);
  }
  for (auto& [key, link] : links) node.nvlinks.push_back(link);
}

}  // namespace

double leading_number(const std::string& text) {
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  return end == text.c_str() || value < 0 ? 0 : value;
}

std::string bitmap_list(hwloc_const_bitmap_t bitmap) {
  char* text = nullptr;
  if (!bitmap || hwloc_bitmap_list_asprintf(&text, bitmap) < 0) return "";
  std::string out = text;
  std::free(text);
  return out;
}

std::string bitmap_hex(hwloc_const_bitmap_t bitmap) {
  char* text = nullptr;
  if (!bitmap || hwloc_bitmap_asprintf(&text, bitmap) < 0) return "";
  std::string out = text;
  std::free(text);
  return out;
}

NodeTopology read_hwloc(hwloc_topology_t topology) {
  NodeTopology node;
  hwloc_obj_t root = hwloc_get_root_obj(topology);
  if (const char* host = hwloc_obj_get_info_by_name(root, "HostName")) node.hostname = host;
  read_cpus(topology, node);

  std::map<hwloc_obj_t, int> index_of;
  for (hwloc_obj_t pci = nullptr; (pci = hwloc_get_next_pcidev(topology, pci));) {
    index_of[pci] = static_cast<int>(node.devices.size());
    node.devices.push_back(read_pci_device(topology, pci));
  }
  read_nvlinks(topology, index_of, node);

  if (node.devices.empty())
    node.warnings.push_back(
        "no PCI devices visible (a VM or container hiding PCI?): GPU and NIC locality unknown");
  if (node.numa_nodes.size() > 1)
    for (const PciDevice& dev : node.devices)
      if (dev.kind != DeviceKind::Other && dev.numa_node < 0)
        node.warnings.push_back(dev.name + " (" + dev.bus_id +
                                ") is not local to one NUMA node; its NUMA affinity is unknown");
  return node;
}

}  // namespace coll::topo::detail
