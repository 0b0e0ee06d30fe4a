// Host identity and sysfs details of the local machine.
#include "topology/local_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "topology/hwloc_reader.hpp"

namespace coll::topo {
namespace detail {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void add_info_once(hwloc_obj_t obj, const std::string& name, const std::string& value) {
  if (!value.empty() && !hwloc_obj_get_info_by_name(obj, name.c_str()))
    hwloc_obj_add_info(obj, name.c_str(), value.c_str());
}

int numa_of(const std::string& device_dir) {
  std::string text = read_line(device_dir + "/device/numa_node");
  return text.empty() ? -1 : std::atoi(text.c_str());
}

bool known(const NodeTopology& node, const std::string& os_name) {
  for (const PciDevice& dev : node.devices)
    if (std::find(dev.os_devices.begin(), dev.os_devices.end(), os_name) != dev.os_devices.end())
      return true;
  return false;
}

PciDevice sysfs_nic(const std::string& name, int numa) {
  PciDevice dev;
  dev.kind = DeviceKind::Nic;
  dev.name = name;
  dev.os_devices = {name};
  dev.numa_node = numa;
  if (numa >= 0) dev.local_numa_nodes = {numa};
  return dev;
}

}  // namespace

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  return line;
}

void annotate_from_sysfs(hwloc_topology_t topology, const std::string& sysfs_root) {
  for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(topology, os));) {
    if (!os->name) continue;
    if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      std::string ports = sysfs_root + "/class/infiniband/" + os->name + "/ports";
      for (const std::string& port : entries(ports)) {
        add_info_once(os, "CollPort" + port + "LinkLayer",
                      read_line(ports + "/" + port + "/link_layer"));
        add_info_once(os, "CollPort" + port + "Rate", read_line(ports + "/" + port + "/rate"));
      }
    } else if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
      // "speed" is Mb/s, -1 or unreadable when the driver does not know (virtio, link down).
      std::string speed = read_line(sysfs_root + "/class/net/" + os->name + "/speed");
      if (leading_number(speed) > 0) add_info_once(os, "CollSpeedMbps", speed);
    }
  }
}

void add_sysfs_only_nics(NodeTopology& node, const std::string& sysfs_root) {
  const std::string ib = sysfs_root + "/class/infiniband/";
  for (const std::string& name : entries(ib)) {
    if (known(node, name)) continue;
    PciDevice dev = sysfs_nic(name, numa_of(ib + name));
    std::string layer = read_line(ib + name + "/ports/1/link_layer");
    dev.nic_kind = layer == "InfiniBand" ? NicKind::InfiniBand
                   : layer == "Ethernet" ? NicKind::RoCE
                                         : NicKind::Unknown;
    dev.link_gbps = leading_number(read_line(ib + name + "/ports/1/rate"));
    node.warnings.push_back("verbs device " + name +
                            " is not under a visible PCI device; its locality is unknown");
    node.devices.push_back(dev);
  }
  if (!node.nics().empty()) return;
  const std::string net = sysfs_root + "/class/net/";
  for (const std::string& name : entries(net)) {
    // ARPHRD_ETHER (1) or ARPHRD_INFINIBAND (32); loopback is 772.
    std::string type = read_line(net + name + "/type");
    std::string state = read_line(net + name + "/operstate");
    if ((type != "1" && type != "32") || (state != "up" && state != "unknown")) continue;
    PciDevice dev = sysfs_nic(name, numa_of(net + name));
    dev.nic_kind = type == "1" ? NicKind::Ethernet : NicKind::Unknown;
    dev.link_gbps = leading_number(read_line(net + name + "/speed")) / 1000;
    node.warnings.push_back("network interface " + name +
                            " found through sysfs only; its locality is unknown");
    node.devices.push_back(dev);
  }
}

}  // namespace detail

std::string local_host_identity() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string identity = host[0] ? host : "unknown-host";
  // The boot id differs between kernels, so between hosts even when hostnames (or machine ids
  // cloned with an image) agree; the machine id differs between containers of one kernel that
  // were given their own. Both together: equal only on the same host in the same installation.
  for (const char* path : {"/proc/sys/kernel/random/boot_id", "/etc/machine-id"})
    if (std::string id = detail::read_line(path); !id.empty()) identity += "/" + id;
  return identity;
}

}  // namespace coll::topo
