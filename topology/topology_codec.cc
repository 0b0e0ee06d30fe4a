// Every value is a token: numbers as text ending in ';', strings as "<length>:<bytes>", lists as
// a count followed by their items. Binary-safe and order-dependent, like the struct it mirrors.
#include "topology_codec.hpp"

#include <cstdlib>

#include "coll/error.hpp"

namespace colltopo {
namespace {

using namespace coll::topo;

constexpr std::string_view kMagic = "colltopo-node-1;";

class Encoder {
 public:
  void num(double value) {
    char text[40];
    std::snprintf(text, sizeof text, "%.17g;", value);
    out_ += text;
  }
  void str(std::string_view value) {
    out_ += std::to_string(value.size()) + ":";
    out_ += value;
  }
  template <typename T, typename F>
  void list(const std::vector<T>& items, F each) {
    num(static_cast<double>(items.size()));
    for (const T& item : items) each(item);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_{kMagic};
};

class Decoder {
 public:
  explicit Decoder(std::string_view text) : text_(text) {
    if (text_.substr(0, kMagic.size()) != kMagic) fail();
    pos_ = kMagic.size();
  }
  double num() {
    const std::size_t end = text_.find(';', pos_);
    if (end == std::string_view::npos) fail();
    const std::string token(text_.substr(pos_, end - pos_));
    char* stop = nullptr;
    const double value = std::strtod(token.c_str(), &stop);
    if (token.empty() || *stop != '\0') fail();
    pos_ = end + 1;
    return value;
  }
  template <typename T>
  T integer() {
    return static_cast<T>(num());
  }
  std::string str() {
    const std::size_t colon = text_.find(':', pos_);
    if (colon == std::string_view::npos || colon == pos_) fail();
    std::size_t length = 0;
    for (std::size_t i = pos_; i < colon; ++i) {
      if (text_[i] < '0' || text_[i] > '9' || length > text_.size()) fail();
      length = length * 10 + static_cast<std::size_t>(text_[i] - '0');
    }
    if (length > text_.size() - colon - 1) fail();
    pos_ = colon + 1 + length;
    return std::string(text_.substr(colon + 1, length));
  }
  template <typename T, typename F>
  void list(std::vector<T>& items, F each) {
    const double count = num();
    if (count < 0 || count > static_cast<double>(text_.size())) fail();
    items.resize(static_cast<std::size_t>(count));
    for (T& item : items) each(item);
  }
  void finish() const {
    if (pos_ != text_.size()) fail();
  }

 private:
  [[noreturn]] void fail() const {
    throw coll::Error(coll::Status::InvalidArgument,
                      "colltopo: malformed topology message at byte " + std::to_string(pos_));
  }
  std::string_view text_;
  std::size_t pos_ = 0;
};

// Enumerations and device indices within range, so that printing cannot index out of bounds.
void check(const NodeTopology& node) {
  bool ok = true;
  const int devices = static_cast<int>(node.devices.size());
  for (const PciDevice& d : node.devices) {
    ok = ok && static_cast<int>(d.kind) >= 0 && d.kind <= DeviceKind::Other;
    ok = ok && static_cast<int>(d.nic_kind) >= 0 && d.nic_kind <= NicKind::Unknown;
    for (const PciBridge& b : d.bridges)
      ok = ok && static_cast<int>(b.role) >= 0 && b.role <= BridgeRole::SwitchDownstream;
  }
  for (const GpuLink& l : node.nvlinks)
    ok = ok && l.a >= 0 && l.b >= 0 && l.a < devices && l.b < devices;
  if (!ok)
    throw coll::Error(coll::Status::InvalidArgument,
                      "colltopo: topology message with values out of range");
}

}  // namespace

std::string encode_topology(const NodeTopology& node) {
  Encoder e;
  for (const std::string* s : {&node.source, &node.hostname, &node.host_identity}) e.str(*s);
  e.list(node.packages, [&](const Package& p) {
    e.num(p.os_index);
    e.str(p.cpu_model);
    e.str(p.cpulist);
    e.num(p.cores);
  });
  e.list(node.numa_nodes, [&](const NumaNode& n) {
    e.num(n.os_index);
    e.num(n.package);
    e.num(static_cast<double>(n.memory_bytes));
    e.str(n.cpulist);
  });
  e.num(node.cores);
  e.num(node.pus);
  e.str(node.binding_cpulist);
  e.str(node.binding_cpuset);
  e.list(node.binding_numa_nodes, [&](int n) { e.num(n); });
  e.list(node.devices, [&](const PciDevice& d) {
    e.num(static_cast<int>(d.kind));
    e.str(d.name);
    e.str(d.bus_id);
    for (int id : {d.vendor_id, d.device_id, d.class_id}) e.num(id);
    e.list(d.os_devices, [&](const std::string& s) { e.str(s); });
    e.num(static_cast<int>(d.nic_kind));
    e.num(d.link_gbps);
    e.num(d.pcie_gbytes_per_s);
    e.num(d.cuda_index);
    e.num(d.numa_node);
    e.list(d.local_numa_nodes, [&](int n) { e.num(n); });
    e.num(d.package);
    e.list(d.bridges, [&](const PciBridge& b) {
      e.num(static_cast<double>(b.id));
      e.num(static_cast<double>(b.switch_id));
      e.num(static_cast<int>(b.role));
      e.str(b.bus_id);
      e.num(b.vendor_id);
      e.num(b.device_id);
      e.str(b.buses);
    });
  });
  e.list(node.nvlinks, [&](const GpuLink& l) {
    e.num(l.a);
    e.num(l.b);
    e.num(l.gbytes_per_s);
    e.num(l.through_switch ? 1 : 0);
  });
  e.list(node.warnings, [&](const std::string& s) { e.str(s); });
  return e.take();
}

NodeTopology decode_topology(std::string_view text) {
  Decoder d(text);
  NodeTopology node;
  for (std::string* s : {&node.source, &node.hostname, &node.host_identity}) *s = d.str();
  d.list(node.packages, [&](Package& p) {
    p.os_index = d.integer<int>();
    p.cpu_model = d.str();
    p.cpulist = d.str();
    p.cores = d.integer<int>();
  });
  d.list(node.numa_nodes, [&](NumaNode& n) {
    n.os_index = d.integer<int>();
    n.package = d.integer<int>();
    n.memory_bytes = d.integer<std::uint64_t>();
    n.cpulist = d.str();
  });
  node.cores = d.integer<int>();
  node.pus = d.integer<int>();
  node.binding_cpulist = d.str();
  node.binding_cpuset = d.str();
  d.list(node.binding_numa_nodes, [&](int& n) { n = d.integer<int>(); });
  d.list(node.devices, [&](PciDevice& dev) {
    dev.kind = static_cast<DeviceKind>(d.integer<int>());
    dev.name = d.str();
    dev.bus_id = d.str();
    for (std::uint16_t* id : {&dev.vendor_id, &dev.device_id, &dev.class_id})
      *id = d.integer<std::uint16_t>();
    d.list(dev.os_devices, [&](std::string& s) { s = d.str(); });
    dev.nic_kind = static_cast<NicKind>(d.integer<int>());
    dev.link_gbps = d.num();
    dev.pcie_gbytes_per_s = d.num();
    dev.cuda_index = d.integer<int>();
    dev.numa_node = d.integer<int>();
    d.list(dev.local_numa_nodes, [&](int& n) { n = d.integer<int>(); });
    dev.package = d.integer<int>();
    d.list(dev.bridges, [&](PciBridge& b) {
      b.id = d.integer<std::uint64_t>();
      b.switch_id = d.integer<std::uint64_t>();
      b.role = static_cast<BridgeRole>(d.integer<int>());
      b.bus_id = d.str();
      b.vendor_id = d.integer<std::uint16_t>();
      b.device_id = d.integer<std::uint16_t>();
      b.buses = d.str();
    });
  });
  d.list(node.nvlinks, [&](GpuLink& l) {
    l.a = d.integer<int>();
    l.b = d.integer<int>();
    l.gbytes_per_s = d.num();
    l.through_switch = d.num() != 0;
  });
  d.list(node.warnings, [&](std::string& s) { s = d.str(); });
  d.finish();
  check(node);
  return node;
}

}  // namespace colltopo
