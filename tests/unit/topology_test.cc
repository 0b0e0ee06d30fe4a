// Topology discovery from the hwloc XML fixtures in topology/fixtures: devices, NUMA affinity,
// PCI path classes, NVLink and nearest-NIC choices.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "coll/topology/node_topology.hpp"
#include "coll/topology/path_class.hpp"

namespace coll::topo {
namespace {

std::string fixture(const std::string& name) {
  return std::string(COLL_SOURCE_DIR) + "/topology/fixtures/" + name;
}

// Device index by OS device or name; fails the test if absent.
int dev(const NodeTopology& t, const std::string& key) {
  int index = t.find_device(key);
  EXPECT_GE(index, 0) << key << " not found";
  return index;
}

std::string path(const NodeTopology& t, const std::string& a, const std::string& b) {
  return std::string(to_string(path_class(t, dev(t, a), dev(t, b))));
}

std::string pci_path(const NodeTopology& t, const std::string& a, const std::string& b) {
  return std::string(to_string(pci_path_class(t, dev(t, a), dev(t, b))));
}

std::string nic_of(const NodeTopology& t, const std::string& gpu) {
  int nic = nearest_nic(t, dev(t, gpu));
  return nic < 0 ? "none" : t.devices[nic].name;
}

class P40Node : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { topo_ = new NodeTopology(load_xml(fixture("p40_node.xml"))); }
  static void TearDownTestSuite() { delete topo_; }
  static NodeTopology* topo_;
};
NodeTopology* P40Node::topo_ = nullptr;

TEST_F(P40Node, CpusAndNuma) {
  const NodeTopology& t = *topo_;
  EXPECT_EQ(t.source, "xml:" + fixture("p40_node.xml"));
  EXPECT_TRUE(t.warnings.empty());
  EXPECT_EQ(t.hostname, "p40-node");
  ASSERT_EQ(t.packages.size(), 2u);
  EXPECT_EQ(t.packages[0].cpu_model, "Intel(R) Xeon(R) CPU E5-2620 v4 @ 2.10GHz");
  EXPECT_EQ(t.packages[0].cores, 8);
  EXPECT_EQ(t.packages[1].cpulist, "8-15,24-31");
  ASSERT_EQ(t.numa_nodes.size(), 2u);
  EXPECT_EQ(t.numa_nodes[1].package, 1);
  EXPECT_EQ(t.cores, 16);
  EXPECT_EQ(t.pus, 32);
  EXPECT_TRUE(t.binding_cpulist.empty()) << "an XML topology has no binding";
}

TEST_F(P40Node, Devices) {
  const NodeTopology& t = *topo_;
  std::vector<int> gpus = t.gpus();
  ASSERT_EQ(gpus.size(), 4u);
  const char* bus[] = {"0000:03:00.0", "0000:04:00.0", "0000:83:00.0", "0000:84:00.0"};
  for (int i = 0; i < 4; ++i) {
    const PciDevice& g = t.devices[gpus[i]];
    EXPECT_EQ(g.name, "Tesla P40");
    EXPECT_EQ(g.vendor_id, 0x10de);
    EXPECT_EQ(g.device_id, 0x1b38);
    EXPECT_EQ(g.bus_id, bus[i]);
    EXPECT_EQ(g.cuda_index, i);
    EXPECT_EQ(g.numa_node, i < 2 ? 0 : 1) << g.bus_id;
    EXPECT_EQ(g.package, i < 2 ? 0 : 1);
    EXPECT_NEAR(g.pcie_gbytes_per_s, 15.75, 0.01);
  }
  ASSERT_EQ(t.nics().size(), 3u);
  const PciDevice& hca = t.devices[dev(t, "mlx4_0")];
  EXPECT_EQ(hca.kind, DeviceKind::Nic);
  EXPECT_EQ(hca.nic_kind, NicKind::InfiniBand);
  EXPECT_EQ(hca.vendor_id, 0x15b3);
  EXPECT_EQ(hca.device_id, 0x1003);
  EXPECT_DOUBLE_EQ(hca.link_gbps, 56);
  EXPECT_EQ(hca.numa_node, 0);
  EXPECT_EQ(hca.os_devices, (std::vector<std::string>{"mlx4_0", "ib0"}));
  EXPECT_EQ(t.devices[dev(t, "eno1")].nic_kind, NicKind::Ethernet);
  // The BMC's VGA is a display device, not a GPU.
  EXPECT_EQ(t.devices[dev(t, "0000:07:00.0")].kind, DeviceKind::Other);
  EXPECT_TRUE(t.nvlinks.empty());
}

TEST_F(P40Node, BridgeChain) {
  const PciDevice& g = topo_->devices[dev(*topo_, "cuda0")];
  ASSERT_EQ(g.bridges.size(), 4u);
  EXPECT_EQ(g.bridges[0].role, BridgeRole::SwitchDownstream);
  EXPECT_EQ(g.bridges[1].role, BridgeRole::SwitchUpstream);
  EXPECT_EQ(g.bridges[0].switch_id, g.bridges[1].id);
  EXPECT_EQ(g.bridges[1].vendor_id, 0x10b5);  // PLX
  EXPECT_EQ(g.bridges[2].role, BridgeRole::RootPort);
  EXPECT_EQ(g.bridges[2].bus_id, "0000:00:02.0");
  EXPECT_EQ(g.bridges[3].role, BridgeRole::HostBridge);
  EXPECT_EQ(g.bridges[3].buses, "0000:[00-07]");
}

TEST_F(P40Node, PathClasses) {
  const NodeTopology& t = *topo_;
  EXPECT_EQ(path(t, "cuda0", "cuda0"), "LOC");
  EXPECT_EQ(path(t, "cuda0", "cuda1"), "PIX");
  EXPECT_EQ(path(t, "cuda2", "cuda3"), "PIX");
  EXPECT_EQ(path(t, "cuda0", "cuda2"), "SYS");
  EXPECT_EQ(path(t, "cuda1", "cuda3"), "SYS");
  EXPECT_EQ(path(t, "cuda0", "mlx4_0"), "PIX");
  EXPECT_EQ(path(t, "mlx4_0", "cuda1"), "PIX");
  EXPECT_EQ(path(t, "cuda2", "mlx4_0"), "SYS");
  EXPECT_EQ(path(t, "cuda0", "eno1"), "PHB");
  EXPECT_EQ(path(t, "eno1", "eno2"), "PHB");
}

TEST_F(P40Node, EveryGpuUsesTheInfiniBandAdapter) {
  // Even the GPUs of socket 1, for which the 1 GbE ports are no nearer.
  for (const char* gpu : {"cuda0", "cuda1", "cuda2", "cuda3"})
    EXPECT_EQ(nic_of(*topo_, gpu), "mlx4_0");
}

class NvLinkNode : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { topo_ = new NodeTopology(load_xml(fixture("nvlink8_node.xml"))); }
  static void TearDownTestSuite() { delete topo_; }
  static NodeTopology* topo_;
};
NodeTopology* NvLinkNode::topo_ = nullptr;

TEST_F(NvLinkNode, Devices) {
  const NodeTopology& t = *topo_;
  EXPECT_TRUE(t.warnings.empty());
  EXPECT_EQ(t.packages.size(), 2u);
  EXPECT_EQ(t.cores, 128);
  std::vector<int> gpus = t.gpus();
  ASSERT_EQ(gpus.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    const PciDevice& g = t.devices[gpus[i]];
    EXPECT_EQ(g.name, "NVIDIA A100-SXM4-40GB");
    EXPECT_EQ(g.cuda_index, i);
    EXPECT_EQ(g.numa_node, i < 4 ? 0 : 1);
  }
  std::vector<int> nics = t.nics();
  ASSERT_EQ(nics.size(), 4u);
  for (int q = 0; q < 4; ++q) {
    const PciDevice& n = t.devices[nics[q]];
    EXPECT_EQ(n.name, "mlx5_" + std::to_string(q));
    EXPECT_EQ(n.nic_kind, NicKind::InfiniBand);
    EXPECT_DOUBLE_EQ(n.link_gbps, 200);
    EXPECT_EQ(n.numa_node, q / 2);
  }
  int switches = 0;
  for (const PciDevice& d : t.devices)
    switches += d.name == "NVSwitch" && d.kind == DeviceKind::Other;
  EXPECT_EQ(switches, 6);
}

TEST_F(NvLinkNode, NvLinkThroughSwitches) {
  const NodeTopology& t = *topo_;
  ASSERT_EQ(t.nvlinks.size(), 28u);  // every pair of 8 GPUs
  for (const GpuLink& link : t.nvlinks) {
    EXPECT_TRUE(link.through_switch);
    EXPECT_DOUBLE_EQ(link.gbytes_per_s, 300);  // 6 switches x 50 GB/s
  }
  EXPECT_EQ(path(t, "cuda0", "cuda1"), "NVL");
  EXPECT_EQ(path(t, "cuda0", "cuda7"), "NVL");
  // Without NVLink the same pairs go over PCIe.
  EXPECT_EQ(pci_path(t, "cuda0", "cuda1"), "PXB");
  EXPECT_EQ(pci_path(t, "cuda0", "cuda2"), "PHB");
  EXPECT_EQ(pci_path(t, "cuda0", "cuda4"), "SYS");
}

TEST_F(NvLinkNode, GpuToNicPaths) {
  const NodeTopology& t = *topo_;
  EXPECT_EQ(path(t, "cuda0", "mlx5_0"), "PIX");
  EXPECT_EQ(path(t, "cuda1", "mlx5_0"), "PXB");
  EXPECT_EQ(path(t, "cuda0", "mlx5_1"), "PHB");
  EXPECT_EQ(path(t, "cuda0", "mlx5_2"), "SYS");
  EXPECT_EQ(path(t, "cuda7", "mlx5_3"), "PXB");
  EXPECT_EQ(path(t, "mlx5_0", "mlx5_1"), "PHB");
}

TEST_F(NvLinkNode, NearestNicIsTheOneOnTheGpusSwitch) {
  for (int g = 0; g < 8; ++g)
    EXPECT_EQ(nic_of(*topo_, "cuda" + std::to_string(g)), "mlx5_" + std::to_string(g / 2));
}

TEST(VmNode, EthernetOnlyNoGpu) {
  NodeTopology t = load_xml(fixture("vm_node.xml"));
  EXPECT_EQ(t.source, "xml:" + fixture("vm_node.xml"));
  EXPECT_TRUE(t.warnings.empty());
  EXPECT_EQ(t.cores, 2);
  ASSERT_EQ(t.numa_nodes.size(), 1u);
  EXPECT_TRUE(t.gpus().empty());
  ASSERT_EQ(t.nics().size(), 1u);
  const PciDevice& eth = t.devices[t.nics()[0]];
  EXPECT_EQ(eth.name, "eth0");
  EXPECT_EQ(eth.nic_kind, NicKind::Ethernet);
  EXPECT_EQ(eth.numa_node, 0);  // the host bridge hangs off the Machine; one NUMA node
  EXPECT_EQ(path(t, "eth0", "vda"), "PHB");
  EXPECT_EQ(nic_for_numa(t, {0}), t.nics()[0]);
}

TEST(VmNode, HiddenPciWarnsAndKeepsCpus) {
  NodeTopology t = load_xml(fixture("vm_nopci_node.xml"));
  EXPECT_EQ(t.source, "xml:" + fixture("vm_nopci_node.xml"));
  EXPECT_EQ(t.cores, 2);
  EXPECT_TRUE(t.devices.empty());
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("no PCI devices"), std::string::npos);
  EXPECT_EQ(nic_for_numa(t, {0}), -1);
}

// A hand-built node: one host bridge (id 1) with a root port (2) and switch (3 up, 4/5 down).
PciDevice on_switch(DeviceKind kind, const std::string& name, std::uint64_t downstream) {
  PciDevice d;
  d.kind = kind;
  d.name = name;
  d.os_devices = {name};
  d.local_numa_nodes = {0};
  d.numa_node = 0;
  PciBridge down{downstream, 3, BridgeRole::SwitchDownstream, "", 0, 0, ""};
  PciBridge up{3, 3, BridgeRole::SwitchUpstream, "", 0, 0, ""};
  PciBridge root{2, 2, BridgeRole::RootPort, "", 0, 0, ""};
  PciBridge host{1, 1, BridgeRole::HostBridge, "", 0, 0, ""};
  d.bridges = {down, up, root, host};
  return d;
}

PciDevice on_host_bridge(DeviceKind kind, const std::string& name) {
  PciDevice d = on_switch(kind, name, 0);
  d.bridges.erase(d.bridges.begin(), d.bridges.begin() + 2);
  return d;
}

TEST(NearestNic, PrefersRdmaOverANearerEthernetPort) {
  NodeTopology t;
  t.devices = {on_switch(DeviceKind::Gpu, "gpu0", 4), on_switch(DeviceKind::Nic, "eth0", 5),
               on_host_bridge(DeviceKind::Nic, "mlx5_0")};
  t.devices[1].nic_kind = NicKind::Ethernet;
  t.devices[2].nic_kind = NicKind::RoCE;
  EXPECT_EQ(pci_path_class(t, 0, 1), PathClass::Pix);
  EXPECT_EQ(pci_path_class(t, 0, 2), PathClass::Phb);
  EXPECT_EQ(nearest_nic(t, 0), 2);
  t.devices[2].nic_kind = NicKind::Ethernet;  // no RDMA at all: the nearest one wins
  EXPECT_EQ(nearest_nic(t, 0), 1);
}

TEST(NearestNic, SpreadsGpusOverEquallyNearNics) {
  NodeTopology t;
  t.devices = {on_host_bridge(DeviceKind::Gpu, "gpu0"), on_host_bridge(DeviceKind::Gpu, "gpu1"),
               on_host_bridge(DeviceKind::Nic, "mlx5_0"), on_host_bridge(DeviceKind::Nic, "mlx5_1"),
               on_host_bridge(DeviceKind::Gpu, "gpu2")};
  for (int n : {2, 3}) t.devices[n].nic_kind = NicKind::InfiniBand;
  EXPECT_EQ(nearest_nic(t, 0), 2);
  EXPECT_EQ(nearest_nic(t, 1), 3);
  EXPECT_EQ(nearest_nic(t, 4), 2);
  t.devices[3].link_gbps = 200;  // a faster port breaks the tie
  EXPECT_EQ(nearest_nic(t, 0), 3);
  EXPECT_EQ(nearest_nic(t, 1), 3);
}

TEST(PathClass, HostBridgesOfOneCpuArePhbOfTwoCpusSys) {
  NodeTopology t;
  t.devices = {on_host_bridge(DeviceKind::Gpu, "a"), on_host_bridge(DeviceKind::Gpu, "b")};
  t.devices[1].bridges.back().id = 99;  // another host bridge
  EXPECT_EQ(pci_path_class(t, 0, 1), PathClass::Phb);
  t.devices[1].local_numa_nodes = {1};
  EXPECT_EQ(pci_path_class(t, 0, 1), PathClass::Sys);
  t.devices[1].bridges.clear();  // location unknown
  t.devices[1].local_numa_nodes = {0};
  EXPECT_EQ(pci_path_class(t, 0, 1), PathClass::Sys);
  EXPECT_EQ(to_string(PathClass::Pxb), "PXB");
}

}  // namespace
}  // namespace coll::topo
