// discover_local() and load_xml(): run hwloc, read its result, and turn every failure into a
// warning plus a topology that still works.
#include "coll/topology/node_topology.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "topology/cuda_probe.hpp"
#include "topology/hwloc_reader.hpp"
#include "topology/local_probe.hpp"

namespace coll::topo {
namespace {

// Owns an hwloc topology for the length of one discovery.
class HwlocTopology {
 public:
  HwlocTopology() {
    if (hwloc_topology_init(&topology_) != 0) topology_ = nullptr;
    // I/O objects are off by default; keep every bridge, PCI function and OS device.
    if (topology_) hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_ALL);
  }
  ~HwlocTopology() {
    if (topology_) hwloc_topology_destroy(topology_);
  }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

void print_warnings(const NodeTopology& node) {
  for (const std::string& w : node.warnings)
    std::fprintf(stderr, "libcoll topology: warning: %s\n", w.c_str());
}

void read_binding(hwloc_topology_t topology, NodeTopology& node) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set && hwloc_get_cpubind(topology, set, HWLOC_CPUBIND_PROCESS) == 0) {
    node.binding_cpulist = detail::bitmap_list(set);
    node.binding_cpuset = detail::bitmap_hex(set);
    for (hwloc_obj_t n = nullptr;
         (n = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, n));)
      if (hwloc_bitmap_intersects(n->cpuset, set))
        node.binding_numa_nodes.push_back(static_cast<int>(n->os_index));
  } else {
    node.warnings.push_back(std::string("cannot read this process's CPU binding: ") +
                            std::strerror(errno));
  }
  hwloc_bitmap_free(set);
}

// XML comments document the fixtures, but hwloc's parsers reject them inside <topology> (and its
// minimal parser everywhere); '<' cannot occur in attribute values, so cutting them is safe.
// An unterminated comment is left in place for hwloc to reject.
std::string strip_comments(const std::string& xml) {
  std::string out;
  out.reserve(xml.size());
  size_t pos = 0;
  while (pos < xml.size()) {
    size_t open = xml.find("<!--", pos);
    if (open == std::string::npos) break;
    size_t close = xml.find("-->", open + 4);
    out.append(xml, pos, open - pos);
    if (close == std::string::npos) return out;  // unterminated: leave the rest to hwloc
    pos = close + 3;
    // hwloc's minimal parser also rejects the blank line a removed comment would leave.
    if (xml.compare(pos, 2, "\r\n") == 0)
      pos += 2;
    else if (pos < xml.size() && xml[pos] == '\n')
      ++pos;
  }
  if (pos < xml.size()) out.append(xml, pos, std::string::npos);
  return out;
}

NodeTopology fallback_topology(Fallback fallback, const std::string& why) {
  NodeTopology node = fallback == Fallback::Local ? discover_local() : minimal_topology();
  node.warnings.insert(node.warnings.begin(),
                       why + (fallback == Fallback::Local ? "; using this machine's topology"
                                                          : "; using a minimal topology"));
  std::fprintf(stderr, "libcoll topology: warning: %s\n", node.warnings.front().c_str());
  return node;
}

}  // namespace

std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::Gpu:
      return "GPU";
    case DeviceKind::Nic:
      return "NIC";
    case DeviceKind::Other:
      return "other";
  }
  return "?";
}

std::string_view to_string(NicKind kind) {
  switch (kind) {
    case NicKind::InfiniBand:
      return "InfiniBand";
    case NicKind::RoCE:
      return "RoCE";
    case NicKind::Ethernet:
      return "Ethernet";
    case NicKind::Unknown:
      return "unknown";
  }
  return "?";
}

std::vector<int> NodeTopology::gpus() const {
  std::vector<int> out;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].kind == DeviceKind::Gpu) out.push_back(static_cast<int>(i));
  return out;
}

std::vector<int> NodeTopology::nics() const {
  std::vector<int> out;
  for (size_t i = 0; i < devices.size(); ++i)
    if (devices[i].kind == DeviceKind::Nic) out.push_back(static_cast<int>(i));
  return out;
}

int NodeTopology::find_device(std::string_view key) const {
  if (key.empty()) return -1;
  for (size_t i = 0; i < devices.size(); ++i) {
    const PciDevice& d = devices[i];
    if (d.bus_id == key || d.name == key) return static_cast<int>(i);
    for (const std::string& os : d.os_devices)
      if (os == key) return static_cast<int>(i);
  }
  return -1;
}

NodeTopology minimal_topology() {
  NodeTopology node;
  node.source = "minimal";
  node.host_identity = local_host_identity();
  node.hostname = node.host_identity.substr(0, node.host_identity.find('/'));
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  node.cores = node.pus = cpus > 0 ? static_cast<int>(cpus) : 1;
  return node;
}

NodeTopology discover_local(const DiscoverOptions& options) {
  HwlocTopology hw;
#ifdef __linux__
  // The Linux backend reads PCI from sysfs by itself. Its libpciaccess twin adds nothing (and
  // leaks under LeakSanitizer), OpenCL would start every GPU driver, GL would probe X displays.
  if (hw.get())
    for (const char* name : {"pci", "opencl", "gl"})
      hwloc_topology_set_components(hw.get(), HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
#endif
  if (!hw.get() || hwloc_topology_load(hw.get()) != 0) {
    NodeTopology node = minimal_topology();
    node.warnings.push_back(std::string("hwloc could not discover this machine (") +
                            std::strerror(errno) + "); using a minimal topology");
    print_warnings(node);
    return node;
  }
  // HWLOC_XMLFILE (or similar) makes hwloc describe another machine; sysfs and the binding
  // would then not match it.
  const bool this_system = hwloc_topology_is_thissystem(hw.get());
  if (this_system) detail::annotate_from_sysfs(hw.get());
  NodeTopology node = detail::read_hwloc(hw.get());
  node.source = "local";
  node.host_identity = local_host_identity();
  node.hostname = node.host_identity.substr(0, node.host_identity.find('/'));
  if (this_system) {
    read_binding(hw.get(), node);
    detail::add_sysfs_only_nics(node);
  } else {
    node.warnings.push_back(
        "hwloc is not reading this machine (HWLOC_XMLFILE set?); "
        "binding and sysfs details skipped");
  }
  if (options.probe_cuda)
    detail::apply_cuda_devices(node, detail::probe_cuda_devices(node.warnings));
  print_warnings(node);
  return node;
}

NodeTopology load_xml(const std::string& path, Fallback fallback) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fallback_topology(fallback,
                             "cannot open topology XML '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  const std::string xml = strip_comments(text.str());
  if (xml.size() >= (1u << 30))
    return fallback_topology(fallback, "topology XML '" + path + "' is over 1 GiB; not reading it");

  HwlocTopology hw;
  // With libxml2, set_xmlbuffer parses at once and fails on bad XML; the minimal parser fails in
  // load. Either way a failure must not fall through to hwloc's default, the local machine.
  if (!hw.get() ||
      hwloc_topology_set_xmlbuffer(hw.get(), xml.c_str(), static_cast<int>(xml.size() + 1)) != 0 ||
      hwloc_topology_load(hw.get()) != 0)
    return fallback_topology(
        fallback, "cannot parse topology XML '" + path + "' (not hwloc XML, or truncated)");
  NodeTopology node = detail::read_hwloc(hw.get());
  node.source = "xml:" + path;
  if (node.hostname.empty()) node.hostname = "unknown-host";
  // Stable per file, so that several fixtures can stand for several hosts.
  node.host_identity = node.hostname + "/xml:" + path;
  print_warnings(node);
  return node;
}

}  // namespace coll::topo
