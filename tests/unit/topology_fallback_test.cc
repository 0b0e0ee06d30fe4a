// Bad input and the local machine: missing or corrupt XML, hidden PCI devices, NICs and GPUs
// known only from sysfs or CUDA, and discover_local() on whatever machine runs the tests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "coll/topology/node_topology.hpp"
#include "coll/topology/path_class.hpp"
#include "topology/cuda_probe.hpp"
#include "topology/local_probe.hpp"

namespace coll::topo {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return std::string(COLL_SOURCE_DIR) + "/topology/fixtures/" + name;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A scratch directory removed with the test.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "coll_topo_XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  std::string write(const std::string& relative, const std::string& text) const {
    fs::path file = fs::path(path_) / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(TopologyFallback, MissingFileWarnsOnceAndFallsBack) {
  const std::string missing = fixture("no_such_node.xml");
  testing::internal::CaptureStderr();
  NodeTopology t = load_xml(missing, Fallback::Minimal);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.source, "minimal");
  EXPECT_GE(t.pus, 1);
  EXPECT_TRUE(t.devices.empty());
  ASSERT_FALSE(t.warnings.empty());
  EXPECT_TRUE(contains(t.warnings[0], "cannot open")) << t.warnings[0];
  EXPECT_TRUE(contains(t.warnings[0], missing));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_TRUE(contains(err, "warning")) << err;
}

TEST(TopologyFallback, CorruptFileFallsBackToThisMachine) {
  NodeTopology t = load_xml(fixture("corrupt.xml"));
  EXPECT_EQ(t.source, "local");
  EXPECT_EQ(t.host_identity, local_host_identity());
  ASSERT_FALSE(t.warnings.empty());
  EXPECT_TRUE(contains(t.warnings[0], "cannot parse")) << t.warnings[0];
}

TEST(TopologyFallback, OtherBadFilesNeverCrash) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty.xml", ""},
      {"html.xml", "<?xml version=\"1.0\"?>\n<html><body>not a topology</body></html>\n"},
      {"binary.xml", std::string("\x7f"
                                 "ELF\x02\x01\x01\0\0\0",
                                 10)},
      {"open_comment.xml", "<?xml version=\"1.0\"?>\n<!-- never closed\n<topology>"},
      {"no_objects.xml", "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n</topology>\n"},
  };
  for (const auto& [name, text] : cases) {
    NodeTopology t = load_xml(dir.write(name, text), Fallback::Minimal);
    EXPECT_EQ(t.source, "minimal") << name;
    ASSERT_FALSE(t.warnings.empty()) << name;
    EXPECT_TRUE(contains(t.warnings[0], name)) << t.warnings[0];
  }
  NodeTopology from_dir = load_xml(dir.path(), Fallback::Minimal);
  EXPECT_EQ(from_dir.source, "minimal");
  EXPECT_FALSE(from_dir.warnings.empty());
}

TEST(TopologyFallback, MinimalTopologyIsUsable) {
  NodeTopology t = minimal_topology();
  EXPECT_GE(t.cores, 1);
  EXPECT_TRUE(t.gpus().empty());
  EXPECT_EQ(nic_for_numa(t, {}), -1);
}

TEST(DiscoverLocal, RunsHere) {
  NodeTopology t = discover_local({.probe_cuda = false});
  EXPECT_EQ(t.source, "local");
  EXPECT_EQ(t.host_identity, local_host_identity());
  EXPECT_TRUE(t.host_identity.starts_with(t.hostname + "/")) << t.host_identity;
  EXPECT_GE(t.pus, 1);
  EXPECT_GE(t.cores, 1);
  EXPECT_LE(t.cores, t.pus);
  EXPECT_FALSE(t.binding_cpulist.empty());
  EXPECT_TRUE(t.binding_cpuset.starts_with("0x")) << t.binding_cpuset;
  EXPECT_EQ(t.binding_numa_nodes.empty(), t.numa_nodes.empty());
  for (int a = 0; a < static_cast<int>(t.devices.size()); ++a) {
    EXPECT_EQ(path_class(t, a, a), PathClass::Loc);
    for (int b = 0; b < static_cast<int>(t.devices.size()); ++b)
      EXPECT_EQ(path_class(t, a, b), path_class(t, b, a));
  }
  for (int gpu : t.gpus()) {
    int nic = nearest_nic(t, gpu);
    EXPECT_EQ(nic < 0, t.nics().empty());
    if (nic >= 0) {
      EXPECT_EQ(t.devices.at(nic).kind, DeviceKind::Nic);
    }
  }
}

TEST(DiscoverLocal, HostIdentityIsStable) {
  std::string id = local_host_identity();
  EXPECT_EQ(id, local_host_identity());
  EXPECT_NE(id.find('/'), std::string::npos) << "expected a boot or machine id: " << id;
}

TEST(SysfsProbe, VerbsDeviceOutsidePciBecomesANic) {
  TempDir sys;
  sys.write("class/infiniband/rxe0/ports/1/link_layer", "Ethernet\n");
  sys.write("class/infiniband/rxe0/ports/1/rate", "10 Gb/sec (1X QDR)\n");
  sys.write("class/net/eth0/type", "1\n");
  sys.write("class/net/eth0/operstate", "up\n");
  NodeTopology t = load_xml(fixture("vm_nopci_node.xml"));
  detail::add_sysfs_only_nics(t, sys.path());
  ASSERT_EQ(t.nics().size(), 1u) << "interfaces are only added when no NIC was found";
  const PciDevice& rxe = t.devices[t.nics()[0]];
  EXPECT_EQ(rxe.name, "rxe0");
  EXPECT_EQ(rxe.nic_kind, NicKind::RoCE);
  EXPECT_DOUBLE_EQ(rxe.link_gbps, 10);
  EXPECT_TRUE(rxe.bridges.empty());
  EXPECT_TRUE(contains(t.warnings.back(), "rxe0"));
  // Adding it twice must not duplicate it.
  detail::add_sysfs_only_nics(t, sys.path());
  EXPECT_EQ(t.nics().size(), 1u);
}

TEST(SysfsProbe, NetworkInterfacesWhenNoNicIsVisible) {
  TempDir sys;
  sys.write("class/net/lo/type", "772\n");
  sys.write("class/net/lo/operstate", "unknown\n");
  sys.write("class/net/eth0/type", "1\n");
  sys.write("class/net/eth0/operstate", "up\n");
  sys.write("class/net/eth0/speed", "25000\n");
  sys.write("class/net/eth1/type", "1\n");
  sys.write("class/net/eth1/operstate", "down\n");
  NodeTopology t = load_xml(fixture("vm_nopci_node.xml"));
  detail::add_sysfs_only_nics(t, sys.path());
  ASSERT_EQ(t.nics().size(), 1u);
  const PciDevice& eth = t.devices[t.nics()[0]];
  EXPECT_EQ(eth.name, "eth0");
  EXPECT_EQ(eth.nic_kind, NicKind::Ethernet);
  EXPECT_DOUBLE_EQ(eth.link_gbps, 25);
  EXPECT_EQ(nic_for_numa(t, {0}), t.nics()[0]);
  // A NIC without a place in the PCI tree is as far as it gets from anything.
  t.devices.push_back(t.devices[t.nics()[0]]);
  EXPECT_EQ(pci_path_class(t, 0, 1), PathClass::Sys);
}

TEST(DiscoverLocal, CudaOrdinalsAreDistinct) {
  NodeTopology t = discover_local();  // probes the CUDA driver where there is one
  for (const PciDevice& d : t.devices) {
    if (d.kind != DeviceKind::Gpu) {
      EXPECT_EQ(d.cuda_index, -1) << d.name;
    }
  }
  if (t.gpus().empty()) GTEST_SKIP() << "no GPU found here: CUDA ordinals not exercised";
  std::vector<int> seen;
  for (int gpu : t.gpus()) {
    int ordinal = t.devices[gpu].cuda_index;
    if (ordinal < 0) continue;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), ordinal), 0) << ordinal;
    seen.push_back(ordinal);
  }
}

TEST(NicKind, InferredWithoutLibcollsSysfsAttributes) {
  // A plain `lstopo --of xml` of an InfiniBand node lacks the CollPort* infos: the IPoIB address
  // (20 bytes) still says InfiniBand, an Ethernet address (6 bytes) says RoCE.
  std::ifstream in(fixture("p40_node.xml"));
  std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string plain;
  std::istringstream lines(xml);
  for (std::string line; std::getline(lines, line);)
    if (!contains(line, "\"CollPort")) plain += line + "\n";
  TempDir dir;
  NodeTopology ib = load_xml(dir.write("ib.xml", plain));
  const PciDevice& hca = ib.devices[ib.find_device("mlx4_0")];
  EXPECT_EQ(hca.nic_kind, NicKind::InfiniBand);
  EXPECT_EQ(hca.link_gbps, 0) << "the rate is unknown without sysfs";

  const std::string ipoib = "80:00:02:08:fe:80:00:00:00:00:00:00:e4:1d:2d:03:00:0a:bc:01";
  ASSERT_TRUE(contains(plain, ipoib));
  std::string roce = plain;
  roce.replace(roce.find(ipoib), ipoib.size(), "e4:1d:2d:0a:bc:01");
  NodeTopology r = load_xml(dir.write("roce.xml", roce));
  EXPECT_EQ(r.devices[r.find_device("mlx4_0")].nic_kind, NicKind::RoCE);
  EXPECT_EQ(nearest_nic(r, r.gpus()[0]), r.find_device("mlx4_0"));
}

TEST(CudaProbe, NormalizesBusIds) {
  EXPECT_EQ(detail::normalize_bus_id("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(detail::normalize_bus_id("00000000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(detail::normalize_bus_id("3b:00.1"), "0000:3b:00.1");
  EXPECT_EQ(detail::normalize_bus_id("garbage"), "");
  EXPECT_EQ(detail::normalize_bus_id("0000:3b:00.0x"), "");
  EXPECT_EQ(detail::normalize_bus_id("0000:3b:40.0"), "");
  EXPECT_EQ(detail::normalize_bus_id("3b:00.0.1"), "");
  EXPECT_EQ(detail::normalize_bus_id("0000:3b:00"), "");
  EXPECT_EQ(detail::normalize_bus_id("0000:3b:-0.0"), "");
}

TEST(CudaProbe, OrdinalsFollowTheDriverNotTheXml) {
  NodeTopology t = load_xml(fixture("p40_node.xml"));
  // As with CUDA_VISIBLE_DEVICES=2,0: the driver sees two GPUs, numbered anew.
  detail::apply_cuda_devices(t,
                             {{0, "0000:83:00.0", "Tesla P40"}, {1, "0000:03:00.0", "Tesla P40"}});
  EXPECT_EQ(t.devices[t.find_device("0000:83:00.0")].cuda_index, 0);
  EXPECT_EQ(t.devices[t.find_device("0000:03:00.0")].cuda_index, 1);
  EXPECT_EQ(t.devices[t.find_device("0000:04:00.0")].cuda_index, -1);
  EXPECT_TRUE(t.warnings.empty());
}

TEST(CudaProbe, GpuHiddenFromHwlocIsKeptWithUnknownLocality) {
  NodeTopology t = load_xml(fixture("vm_node.xml"));
  detail::apply_cuda_devices(t, {{0, "0000:00:07.0", "NVIDIA H100"}});
  ASSERT_EQ(t.gpus().size(), 1u);
  int gpu = t.gpus()[0];
  EXPECT_EQ(t.devices[gpu].name, "NVIDIA H100");
  EXPECT_EQ(t.devices[gpu].cuda_index, 0);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_EQ(pci_path_class(t, gpu, t.nics()[0]), PathClass::Sys);
  EXPECT_EQ(nearest_nic(t, gpu), t.nics()[0]);
}

}  // namespace
}  // namespace coll::topo
