// NodeTopology: what one rank learns about its own machine — CPUs, NUMA nodes, its binding, and
// the PCI devices (GPUs, NICs) with the chain of bridges that connects each to the CPUs. Built
// from hwloc, either for the real machine (discover_local) or from an XML file (load_xml).
//
// The struct is plain data so that path classes (path_class.hpp) and rank maps (rank_map.hpp) can
// be computed and tested without hwloc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace coll::topo {

enum class DeviceKind { Gpu, Nic, Other };
enum class NicKind { InfiniBand, RoCE, Ethernet, Unknown };

std::string_view to_string(DeviceKind kind);
std::string_view to_string(NicKind kind);

struct Package {
  int os_index = -1;
  std::string cpu_model;  // hwloc's CPUModel info, trimmed; empty if unknown
  std::string cpulist;    // PUs, e.g. "0-7,16-23"
  int cores = 0;
};

struct NumaNode {
  int os_index = -1;
  int package = -1;  // os_index of the package holding it, -1 if none or several
  std::uint64_t memory_bytes = 0;
  std::string cpulist;
};

// A PCI bridge on the way from a device up to the CPU. PCIe switches appear in hwloc as an
// upstream-port bridge whose children are downstream-port bridges; both carry the switch's id.
enum class BridgeRole { HostBridge, RootPort, SwitchUpstream, SwitchDownstream };

struct PciBridge {
  std::uint64_t id = 0;         // hwloc gp_index: unique within one topology
  std::uint64_t switch_id = 0;  // the upstream port's id for switch ports, else == id
  BridgeRole role = BridgeRole::HostBridge;
  std::string bus_id;  // "0000:00:02.0"; empty for a host bridge
  std::uint16_t vendor_id = 0, device_id = 0;
  std::string buses;  // the bus range below it, "0000:[03-05]"
};

struct PciDevice {
  DeviceKind kind = DeviceKind::Other;
  std::string name;    // "Tesla P40" for a GPU, "mlx4_0" / "eth0" for a NIC
  std::string bus_id;  // "0000:04:00.0"; empty if the device is known only outside PCI
  std::uint16_t vendor_id = 0, device_id = 0, class_id = 0;
  std::vector<std::string> os_devices;  // "cuda0", "nvml0", "mlx4_0", "ib0", "eth0", ...
  NicKind nic_kind = NicKind::Unknown;  // meaningful for NICs only
  double link_gbps = 0;                 // NIC port rate in Gb/s, 0 if unknown
  double pcie_gbytes_per_s = 0;         // PCIe link as hwloc reports it (GB/s), 0 if unknown
  int cuda_index = -1;                  // CUDA device ordinal in this process, -1 if none
  int numa_node = -1;                   // os_index of the one local NUMA node, -1 if unknown
  std::vector<int> local_numa_nodes;    // all NUMA nodes local to the device (os indices)
  int package = -1;                     // os_index of the local package, -1 if unknown
  std::vector<PciBridge> bridges;       // nearest first; back() is the host bridge if known

  bool is_nvidia() const { return vendor_id == 0x10de; }
  bool is_rdma() const { return nic_kind == NicKind::InfiniBand || nic_kind == NicKind::RoCE; }
};

// A GPU pair joined by NVLink, directly or through NVSwitches.
struct GpuLink {
  int a = -1, b = -1;  // indices into NodeTopology::devices
  double gbytes_per_s = 0;
  bool through_switch = false;
};

struct NodeTopology {
  std::string source;  // "local", "xml:<path>", or "minimal"
  std::string hostname;
  std::string host_identity;  // see local_host_identity(); "<HostName>/xml:<path>" for XML
  std::vector<Package> packages;
  std::vector<NumaNode> numa_nodes;
  int cores = 0;
  int pus = 0;
  // The calling process's CPU binding (discover_local only).
  std::string binding_cpulist;  // "0-3"
  std::string binding_cpuset;   // hwloc hex form, "0x0000000f"
  std::vector<int> binding_numa_nodes;
  std::vector<PciDevice> devices;
  std::vector<GpuLink> nvlinks;
  std::vector<std::string> warnings;  // each also printed once to stderr

  std::vector<int> gpus() const;  // device indices, in PCI order
  std::vector<int> nics() const;
  // Index of the device with this bus id, OS device name or name; -1 if none.
  int find_device(std::string_view key) const;
};

struct DiscoverOptions {
  bool probe_cuda = true;  // ask the CUDA driver (if installed) for device ordinals
};

enum class Fallback { Local, Minimal };

// The real machine. Never throws for missing hardware; problems become warnings.
NodeTopology discover_local(const DiscoverOptions& options = {});

// A topology from an hwloc XML file (fixtures, or another machine's `lstopo --of xml`); XML
// comments are allowed anywhere. A missing, unreadable or corrupt file gives a one-line warning
// on stderr and the fallback topology, whose `warnings` start with what happened. The result has
// no binding; its host_identity is "<HostName>/xml:<path>".
NodeTopology load_xml(const std::string& path, Fallback fallback = Fallback::Local);

// CPUs from sysconf, no devices: what is left when hwloc cannot be used at all.
NodeTopology minimal_topology();

// hostname + "/" + boot id + "/" + machine id (each id if readable): two hosts with one hostname
// differ, and so do containers of one kernel with their own machine ids; two processes of one
// system agree.
std::string local_host_identity();

}  // namespace coll::topo
