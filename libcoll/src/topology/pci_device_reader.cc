// One hwloc PCI object -> PciDevice: what it is (GPU, NIC, other), its name, its NIC kind and
// speed, its NUMA locality and the chain of bridges above it.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "topology/hwloc_reader.hpp"

namespace coll::topo::detail {
namespace {

// hwloc declares these structs inside the union hwloc_obj_attr_u.
using PciAttr = hwloc_obj_attr_u::hwloc_pcidev_attr_s;
using BridgeAttr = hwloc_obj_attr_u::hwloc_bridge_attr_s;

std::string info(hwloc_obj_t obj, const std::string& name) {
  const char* value = hwloc_obj_get_info_by_name(obj, name.c_str());
  return value ? value : "";
}

std::string_view subtype(hwloc_obj_t obj) {
  return obj->subtype ? obj->subtype : "";
}

std::string format_bus_id(const PciAttr& pci) {
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", static_cast<unsigned>(pci.domain),
                static_cast<unsigned>(pci.bus), static_cast<unsigned>(pci.dev),
                static_cast<unsigned>(pci.func));
  return text;
}

std::vector<hwloc_obj_t> os_devices_of(hwloc_obj_t pci) {
  std::vector<hwloc_obj_t> out;
  for (hwloc_obj_t child = pci->io_first_child; child; child = child->next_sibling)
    if (child->type == HWLOC_OBJ_OS_DEVICE) out.push_back(child);
  return out;
}

hwloc_obj_t first_osdev(const std::vector<hwloc_obj_t>& osdevs, hwloc_obj_osdev_type_t type) {
  for (hwloc_obj_t os : osdevs)
    if (os->attr->osdev.type == type) return os;
  return nullptr;
}

// GPU compute backends that hwloc attaches as OS devices.
bool is_gpu_backend(hwloc_obj_t os) {
  std::string_view st = subtype(os);
  return st == "CUDA" || st == "NVML" || st == "RSMI" || st == "LevelZero";
}

// Display-class NVIDIA functions are GPUs; other display devices (a BMC's VGA, a VM's virtual
// display) count only when a compute backend claims them.
bool is_gpu(const PciAttr& pci, const std::vector<hwloc_obj_t>& osdevs) {
  if (pci.vendor_id == 0x10de && (pci.class_id >> 8) == 0x03) return true;
  for (hwloc_obj_t os : osdevs)
    if (is_gpu_backend(os)) return true;
  return false;
}

bool is_nic(const PciAttr& pci, const std::vector<hwloc_obj_t>& osdevs) {
  return (pci.class_id >> 8) == 0x02 || first_osdev(osdevs, HWLOC_OBJ_OSDEV_OPENFABRICS) ||
         first_osdev(osdevs, HWLOC_OBJ_OSDEV_NETWORK);
}

// The port whose attributes describe the HCA: the first ACTIVE one (state 4), else port 1.
unsigned active_port(hwloc_obj_t verbs) {
  for (unsigned port = 1; port <= 8; ++port) {
    std::string state = info(verbs, "Port" + std::to_string(port) + "State");
    if (state.empty()) break;
    if (state == "4") return port;
  }
  return 1;
}

// Number of bytes in a hardware address "aa:bb:...": 6 for Ethernet, 20 for IPoIB.
int address_bytes(const std::string& address) {
  if (address.empty()) return 0;
  int bytes = 1;
  for (char c : address) bytes += c == ':';
  return bytes;
}

void classify_nic(PciDevice& dev, const PciAttr& pci, const std::vector<hwloc_obj_t>& osdevs) {
  hwloc_obj_t verbs = first_osdev(osdevs, HWLOC_OBJ_OSDEV_OPENFABRICS);
  hwloc_obj_t net = first_osdev(osdevs, HWLOC_OBJ_OSDEV_NETWORK);
  int addr = net ? address_bytes(info(net, "Address")) : 0;
  if (verbs) {
    dev.name = verbs->name ? verbs->name : "";
    std::string port = "Port" + std::to_string(active_port(verbs));
    // CollPort<n>LinkLayer is sysfs' ports/<n>/link_layer, added by local discovery or fixtures.
    std::string layer = info(verbs, "Coll" + port + "LinkLayer");
    std::string lid = info(verbs, port + "LID");
    if (layer == "InfiniBand")
      dev.nic_kind = NicKind::InfiniBand;
    else if (layer == "Ethernet")
      dev.nic_kind = NicKind::RoCE;
    else if (addr == 20 || pci.class_id == 0x0207)
      dev.nic_kind = NicKind::InfiniBand;  // IPoIB address or an InfiniBand-class function
    else if (addr == 6)
      dev.nic_kind = NicKind::RoCE;  // verbs over an Ethernet port
    else if (!lid.empty() && std::strtoul(lid.c_str(), nullptr, 0) != 0)
      dev.nic_kind = NicKind::InfiniBand;  // only InfiniBand ports get a LID
    dev.link_gbps = leading_number(info(verbs, "Coll" + port + "Rate"));
  } else if (net) {
    dev.name = net->name ? net->name : "";
    // An IPoIB interface without a verbs device gives IP only; call it neither.
    dev.nic_kind = addr == 20 ? NicKind::Unknown : NicKind::Ethernet;
  } else {
    dev.nic_kind = pci.class_id == 0x0207   ? NicKind::InfiniBand
                   : pci.class_id == 0x0200 ? NicKind::Ethernet
                                            : NicKind::Unknown;
  }
  if (dev.link_gbps == 0 && net) dev.link_gbps = leading_number(info(net, "CollSpeedMbps")) / 1000;
}

std::string pci_name(hwloc_obj_t obj, const char* what, const PciAttr& pci) {
  std::string model = info(obj, "PCIDevice");
  if (!model.empty()) return model;
  char text[48];
  std::snprintf(text, sizeof text, "%s %04x:%04x", what, static_cast<unsigned>(pci.vendor_id),
                static_cast<unsigned>(pci.device_id));
  return text;
}

// Role of a bridge from its place in the chain: below a root port, PCIe switches come as an
// upstream port followed by downstream ports, so odd positions are upstream ports.
void fill_bridges(PciDevice& dev, hwloc_obj_t pci) {
  for (hwloc_obj_t b = pci->parent; b && b->type == HWLOC_OBJ_BRIDGE; b = b->parent) {
    PciBridge br;
    br.id = b->gp_index;
    br.switch_id = b->gp_index;
    const BridgeAttr& attr = b->attr->bridge;
    if (attr.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
      br.bus_id = format_bus_id(attr.upstream.pci);
      br.vendor_id = attr.upstream.pci.vendor_id;
      br.device_id = attr.upstream.pci.device_id;
    }
    if (attr.downstream_type == HWLOC_OBJ_BRIDGE_PCI) {
      char text[32];
      std::snprintf(text, sizeof text, "%04x:[%02x-%02x]",
                    static_cast<unsigned>(attr.downstream.pci.domain),
                    static_cast<unsigned>(attr.downstream.pci.secondary_bus),
                    static_cast<unsigned>(attr.downstream.pci.subordinate_bus));
      br.buses = text;
    }
    int above = 0;  // PCI-to-PCI bridges between this one and the host bridge
    for (hwloc_obj_t up = b->parent; up && up->type == HWLOC_OBJ_BRIDGE &&
                                     up->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_HOST;
         up = up->parent)
      ++above;
    if (attr.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
      br.role = BridgeRole::HostBridge;
    } else if (above == 0) {
      br.role = BridgeRole::RootPort;
    } else if (above % 2 == 1) {
      br.role = BridgeRole::SwitchUpstream;
    } else {
      br.role = BridgeRole::SwitchDownstream;
      br.switch_id = b->parent->gp_index;
    }
    dev.bridges.push_back(br);
  }
}

void fill_locality(PciDevice& dev, hwloc_topology_t topology, hwloc_obj_t pci) {
  hwloc_obj_t cpu_side = hwloc_get_non_io_ancestor_obj(topology, pci);
  if (!cpu_side || !cpu_side->nodeset) return;
  for (int node = hwloc_bitmap_first(cpu_side->nodeset); node >= 0;
       node = hwloc_bitmap_next(cpu_side->nodeset, node))
    dev.local_numa_nodes.push_back(node);
  if (dev.local_numa_nodes.size() == 1) dev.numa_node = dev.local_numa_nodes.front();
  hwloc_obj_t found = nullptr;
  int count = 0;
  for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, p));)
    if (cpu_side->cpuset && hwloc_bitmap_intersects(p->cpuset, cpu_side->cpuset)) {
      found = p;
      ++count;
    }
  if (count == 1) dev.package = static_cast<int>(found->os_index);
}

}  // namespace

PciDevice read_pci_device(hwloc_topology_t topology, hwloc_obj_t pci_obj) {
  const PciAttr& pci = pci_obj->attr->pcidev;
  std::vector<hwloc_obj_t> osdevs = os_devices_of(pci_obj);
  PciDevice dev;
  dev.bus_id = format_bus_id(pci);
  dev.vendor_id = pci.vendor_id;
  dev.device_id = pci.device_id;
  dev.class_id = pci.class_id;
  dev.pcie_gbytes_per_s = pci.linkspeed;
  for (hwloc_obj_t os : osdevs)
    if (os->name) dev.os_devices.push_back(os->name);

  if (is_gpu(pci, osdevs)) {
    dev.kind = DeviceKind::Gpu;
    for (hwloc_obj_t os : osdevs) {
      if (dev.name.empty()) dev.name = info(os, "GPUModel");
      // hwloc's CUDA backend names devices by CUDA ordinal: cuda0, cuda1, ...
      if (subtype(os) == "CUDA" && os->name && std::string_view(os->name).starts_with("cuda"))
        dev.cuda_index = std::atoi(os->name + 4);
    }
    if (dev.name.empty()) dev.name = pci_name(pci_obj, "GPU", pci);
  } else if (is_nic(pci, osdevs)) {
    dev.kind = DeviceKind::Nic;
    classify_nic(dev, pci, osdevs);
    if (dev.name.empty()) dev.name = pci_name(pci_obj, "NIC", pci);
  } else {
    dev.name = !subtype(pci_obj).empty() ? std::string(subtype(pci_obj))
               : !dev.os_devices.empty() ? dev.os_devices.front()
                                         : pci_name(pci_obj, "PCI", pci);
  }
  fill_bridges(dev, pci_obj);
  fill_locality(dev, topology, pci_obj);
  return dev;
}

}  // namespace coll::topo::detail
