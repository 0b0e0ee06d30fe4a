#include "device_tree.hpp"

#include <algorithm>

#include "coll/topology/path_class.hpp"
#include "text_format.hpp"

namespace colltopo {
namespace {

using namespace coll::topo;

bool shown(const PciDevice& d) {
  return d.kind == DeviceKind::Gpu || d.kind == DeviceKind::Nic;
}

std::string pci_id(std::uint16_t vendor, std::uint16_t device) {
  std::string out;
  appendf(out, "%04x:%04x", vendor, device);
  return out;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// The device's line: label, bus id, name, what it is and how fast.
std::string device_line(const NodeTopology& node, int index) {
  const PciDevice& d = node.devices[static_cast<std::size_t>(index)];
  std::string out;
  appendf(out, "%-5s %-13s %s", device_label(node, index).c_str(),
          d.bus_id.empty() ? "(no PCI)" : d.bus_id.c_str(), d.name.c_str());
  if (d.vendor_id != 0) out += "  " + pci_id(d.vendor_id, d.device_id);
  if (d.kind == DeviceKind::Nic) {
    out += "  " + std::string(to_string(d.nic_kind));
    if (d.link_gbps > 0) appendf(out, " %g Gb/s", d.link_gbps);
  }
  if (d.kind == DeviceKind::Gpu && d.cuda_index >= 0) appendf(out, "  CUDA %d", d.cuda_index);
  if (!d.os_devices.empty()) out += "  [" + join(d.os_devices, " ") + "]";
  if (d.pcie_gbytes_per_s > 0) appendf(out, "  PCIe %.1f GB/s", d.pcie_gbytes_per_s);
  return out;
}

void print_devices(std::string& out, const NodeTopology& node, const std::vector<int>& devices,
                   const char* indent) {
  for (int i : devices) {
    appendf(out, "%s%s\n", indent, device_line(node, i).c_str());
    appendf(out, "%s      via %s\n", indent,
            bridge_chain(node.devices[static_cast<std::size_t>(i)]).c_str());
  }
}

std::string gib(std::uint64_t bytes) {
  std::string out;
  appendf(out, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return out;
}

void print_tree(std::string& out, const NodeTopology& node) {
  std::vector<bool> placed(node.devices.size(), false);
  auto devices_where = [&](auto belongs) {
    std::vector<int> found;
    for (std::size_t i = 0; i < node.devices.size(); ++i)
      if (!placed[i] && shown(node.devices[i]) && belongs(node.devices[i])) {
        found.push_back(static_cast<int>(i));
        placed[i] = true;
      }
    return found;
  };
  for (const Package& p : node.packages) {
    appendf(out, "  package %d: %s, %d cores, PUs %s\n", p.os_index,
            p.cpu_model.empty() ? "unknown CPU" : p.cpu_model.c_str(), p.cores, p.cpulist.c_str());
    for (const NumaNode& n : node.numa_nodes) {
      if (n.package != p.os_index) continue;
      appendf(out, "    NUMA %d: %s, PUs %s\n", n.os_index, gib(n.memory_bytes).c_str(),
              n.cpulist.c_str());
      print_devices(out, node,
                    devices_where([&](const PciDevice& d) { return d.numa_node == n.os_index; }),
                    "      ");
    }
    print_devices(out, node,
                  devices_where([&](const PciDevice& d) { return d.package == p.os_index; }),
                  "    ");
  }
  for (const NumaNode& n : node.numa_nodes) {
    const bool listed = std::any_of(node.packages.begin(), node.packages.end(),
                                    [&](const Package& p) { return p.os_index == n.package; });
    if (listed) continue;
    appendf(out, "  NUMA %d (spans packages): %s, PUs %s\n", n.os_index,
            gib(n.memory_bytes).c_str(), n.cpulist.c_str());
    print_devices(out, node,
                  devices_where([&](const PciDevice& d) { return d.numa_node == n.os_index; }),
                  "    ");
  }
  const auto rest = devices_where([](const PciDevice&) { return true; });
  if (!rest.empty()) {
    out += "  devices of unknown locality:\n";
    print_devices(out, node, rest, "    ");
  }
  const auto others = std::count_if(node.devices.begin(), node.devices.end(),
                                    [](const PciDevice& d) { return !shown(d); });
  if (others > 0) appendf(out, "  (%ld other PCI devices not shown)\n", static_cast<long>(others));
}

// GPUs then NICs, the rows and columns of the path matrix.
std::vector<int> matrix_devices(const NodeTopology& node) {
  std::vector<int> devices = node.gpus();
  for (int n : node.nics()) devices.push_back(n);
  return devices;
}

void print_paths(std::string& out, const NodeTopology& node) {
  const auto devices = matrix_devices(node);
  if (devices.empty()) {
    out += "  path classes: no GPUs or NICs\n";
    return;
  }
  out += "  path classes (LOC < NVL < PIX < PXB < PHB < SYS):\n        ";
  for (int b : devices) appendf(out, " %5s", device_label(node, b).c_str());
  out += "\n";
  for (int a : devices) {
    appendf(out, "    %-5s", device_label(node, a).c_str());
    for (int b : devices)
      appendf(out, " %5s", a == b ? "X" : std::string(to_string(path_class(node, a, b))).c_str());
    out += "\n";
  }
  for (int g : node.gpus()) {
    const int nic = nearest_nic(node, g);
    if (nic < 0) {
      appendf(out, "  nearest NIC of %s: none\n", device_label(node, g).c_str());
      continue;
    }
    appendf(out, "  nearest NIC of %s: %s %s (%s)\n", device_label(node, g).c_str(),
            device_label(node, nic).c_str(),
            node.devices[static_cast<std::size_t>(nic)].name.c_str(),
            std::string(to_string(path_class(node, g, nic))).c_str());
  }
  if (!node.nvlinks.empty()) {
    double low = node.nvlinks.front().gbytes_per_s, high = low;
    bool switched = false;
    for (const GpuLink& l : node.nvlinks) {
      low = std::min(low, l.gbytes_per_s);
      high = std::max(high, l.gbytes_per_s);
      switched = switched || l.through_switch;
    }
    std::string speed;
    if (low == high)
      appendf(speed, "%g", low);
    else
      appendf(speed, "%g-%g", low, high);
    appendf(out, "  NVLink: %zu GPU pairs, %s GB/s per pair%s\n", node.nvlinks.size(),
            speed.c_str(), switched ? ", through NVSwitches" : "");
  }
}

}  // namespace

std::string device_label(const NodeTopology& node, int device) {
  const auto& d = node.devices.at(static_cast<std::size_t>(device));
  const auto group = d.kind == DeviceKind::Gpu ? node.gpus() : node.nics();
  const auto at = std::find(group.begin(), group.end(), device) - group.begin();
  if (d.kind == DeviceKind::Other) return "dev" + std::to_string(device);
  return (d.kind == DeviceKind::Gpu ? "GPU" : "NIC") + std::to_string(at);
}

std::string bridge_chain(const PciDevice& device) {
  std::vector<std::string> steps;
  const auto& bridges = device.bridges;
  for (std::size_t i = 0; i < bridges.size(); ++i) {
    const PciBridge& b = bridges[i];
    switch (b.role) {
      case BridgeRole::SwitchDownstream:
        // A downstream port followed by its own upstream port is one switch.
        if (i + 1 < bridges.size() && bridges[i + 1].role == BridgeRole::SwitchUpstream &&
            bridges[i + 1].switch_id == b.switch_id)
          break;
        steps.push_back("switch port " + b.bus_id);
        break;
      case BridgeRole::SwitchUpstream:
        steps.push_back("switch " + pci_id(b.vendor_id, b.device_id) + " @" + b.bus_id);
        break;
      case BridgeRole::RootPort:
        steps.push_back("root port " + b.bus_id);
        break;
      case BridgeRole::HostBridge:
        steps.push_back("host bridge" + (b.buses.empty() ? "" : " " + b.buses));
        break;
    }
  }
  return steps.empty() ? "unknown" : join(steps, " > ");
}

void print_node(std::string& out, const NodeTopology& node, const std::string& title) {
  appendf(out, "%s: %s (%s)\n", title.c_str(), node.hostname.c_str(), node.source.c_str());
  appendf(out, "  %zu packages, %zu NUMA nodes, %d cores, %d PUs, %zu GPUs, %zu NICs\n",
          node.packages.size(), node.numa_nodes.size(), node.cores, node.pus, node.gpus().size(),
          node.nics().size());
  for (const auto& warning : node.warnings) appendf(out, "  warning: %s\n", warning.c_str());
  print_tree(out, node);
  print_paths(out, node);
}

void json_node(coll::tools::JsonWriter& json, const NodeTopology& node) {
  json.field("hostname", node.hostname).field("source", node.source);
  json.field("host_identity", node.host_identity);
  json.field("cores", node.cores).field("pus", node.pus);
  json.begin_array("warnings");
  for (const auto& w : node.warnings) json.begin_object().field("message", w).end_object();
  json.end_array().begin_array("packages");
  for (const Package& p : node.packages)
    json.begin_object()
        .field("os_index", p.os_index)
        .field("cpu_model", p.cpu_model)
        .field("cores", p.cores)
        .field("cpulist", p.cpulist)
        .end_object();
  json.end_array().begin_array("numa_nodes");
  for (const NumaNode& n : node.numa_nodes)
    json.begin_object()
        .field("os_index", n.os_index)
        .field("package", n.package)
        .field("memory_bytes", static_cast<long long>(n.memory_bytes))
        .field("cpulist", n.cpulist)
        .end_object();
  json.end_array().begin_array("devices");
  for (int i : matrix_devices(node)) {
    const PciDevice& d = node.devices[static_cast<std::size_t>(i)];
    json.begin_object().field("label", device_label(node, i)).field("kind", to_string(d.kind));
    json.field("name", d.name).field("bus_id", d.bus_id);
    json.field("pci_id", pci_id(d.vendor_id, d.device_id));
    if (d.kind == DeviceKind::Nic)
      json.field("nic_kind", to_string(d.nic_kind)).field("link_gbps", d.link_gbps);
    json.field("cuda_index", d.cuda_index).field("numa_node", d.numa_node);
    json.field("package", d.package).field("pcie_gbytes_per_s", d.pcie_gbytes_per_s);
    json.field("bridges", bridge_chain(d));
    if (d.kind == DeviceKind::Gpu) {
      const int nic = nearest_nic(node, i);
      json.field("nearest_nic", nic < 0 ? std::string() : device_label(node, nic));
    }
    json.end_object();
  }
  json.end_array().begin_array("paths");
  const auto devices = matrix_devices(node);
  for (int a : devices)
    for (int b : devices)
      if (a < b)
        json.begin_object()
            .field("a", device_label(node, a))
            .field("b", device_label(node, b))
            .field("class", to_string(path_class(node, a, b)))
            .end_object();
  json.end_array();
}

}  // namespace colltopo
