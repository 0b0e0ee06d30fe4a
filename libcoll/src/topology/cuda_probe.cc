// Asks the CUDA driver API (libcuda.so.1, opened with dlopen) for each device's PCI bus id, so
// that hwloc's PCI devices can be matched to the CUDA ordinals this process uses.
#include "topology/cuda_probe.hpp"

#include <dlfcn.h>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace coll::topo::detail {
namespace {

// The few driver API entry points used, declared by their documented C signatures.
using CuInit = int (*)(unsigned int);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetPCIBusId = int (*)(char*, int, int);
using CuDeviceGetName = int (*)(char*, int, int);

template <typename Fn>
Fn symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

std::string normalize_bus_id(const std::string& text) {
  // [domain:]bus:device.function, all hex; nothing else allowed (not even a "0x").
  std::string_view rest(text);
  std::vector<std::string_view> parts;
  std::string separators;
  for (size_t cut; (cut = rest.find_first_of(":.")) != std::string_view::npos;) {
    parts.push_back(rest.substr(0, cut));
    separators += rest[cut];
    rest.remove_prefix(cut + 1);
  }
  parts.push_back(rest);
  if (separators == ":.")
    parts.insert(parts.begin(), "0");
  else if (separators != "::.")
    return "";
  const unsigned limits[] = {0xffff, 0xff, 0x1f, 7};
  unsigned value[4] = {};
  for (size_t i = 0; i < 4; ++i) {
    std::string_view p = parts[i];
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value[i], 16);
    if (p.empty() || ec != std::errc() || end != p.data() + p.size() || value[i] > limits[i])
      return "";
  }
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", value[0], value[1], value[2], value[3]);
  return out;
}

std::vector<CudaDevice> probe_cuda_devices(std::vector<std::string>& warnings) {
  std::vector<CudaDevice> out;
  // Never closed: unloading the driver after cuInit is not supported.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return out;
  auto init = symbol<CuInit>(lib, "cuInit");
  auto get_count = symbol<CuDeviceGetCount>(lib, "cuDeviceGetCount");
  auto get = symbol<CuDeviceGet>(lib, "cuDeviceGet");
  auto get_bus = symbol<CuDeviceGetPCIBusId>(lib, "cuDeviceGetPCIBusId");
  auto get_name = symbol<CuDeviceGetName>(lib, "cuDeviceGetName");
  if (!init || !get_count || !get || !get_bus || !get_name) {
    warnings.push_back("libcuda.so.1 lacks the driver API entry points; CUDA ordinals unknown");
    return out;
  }
  int count = 0;
  if (int rc = init(0); rc != 0) {
    // 100 is CUDA_ERROR_NO_DEVICE: a driver without GPUs is not worth a warning.
    if (rc != 100)
      warnings.push_back("cuInit failed with CUDA error " + std::to_string(rc) +
                         "; CUDA ordinals unknown");
    return out;
  }
  if (get_count(&count) != 0) return out;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    int device = 0;
    char bus[64] = {}, name[256] = {};
    if (get(&device, ordinal) != 0 || get_bus(bus, sizeof bus, device) != 0) continue;
    get_name(name, sizeof name, device);
    out.push_back({ordinal, normalize_bus_id(bus), name});
  }
  return out;
}

void apply_cuda_devices(NodeTopology& node, const std::vector<CudaDevice>& cuda) {
  // hwloc's own cudaN names (if any) were assigned by another process's view; ours wins.
  if (!cuda.empty())
    for (PciDevice& dev : node.devices) dev.cuda_index = -1;
  for (const CudaDevice& c : cuda) {
    int index = c.bus_id.empty() ? -1 : node.find_device(c.bus_id);
    if (index >= 0) {
      PciDevice& dev = node.devices[index];
      dev.kind = DeviceKind::Gpu;
      dev.cuda_index = c.ordinal;
      if (dev.name.empty() || dev.name.starts_with("GPU ")) dev.name = c.name;
      continue;
    }
    PciDevice dev;
    dev.kind = DeviceKind::Gpu;
    dev.name = c.name;
    dev.bus_id = c.bus_id;
    dev.vendor_id = 0x10de;
    dev.cuda_index = c.ordinal;
    node.warnings.push_back("CUDA device " + std::to_string(c.ordinal) + " (" + c.bus_id +
                            ") is not among hwloc's PCI devices; its locality is unknown");
    node.devices.push_back(dev);
  }
}

}  // namespace coll::topo::detail
