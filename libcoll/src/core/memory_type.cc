#include "core/memory_type.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>

namespace coll {
namespace {

// cuPointerGetAttribute by its documented C signature and constants (cuda.h), so that libcoll
// neither needs CUDA's headers to build nor its libraries to load.
using CuPointerGetAttribute = int (*)(void* data, int attribute, unsigned long long pointer);
constexpr int kAttributeMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttributeIsManaged = 8;     // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr unsigned kMemoryTypeDevice = 2;  // CU_MEMORYTYPE_DEVICE

// The driver's entry point once some code of this process has loaded libcuda.so.1; null before.
// Looked up again until found: CUDA may be initialized after the communicator was made.
CuPointerGetAttribute loaded_driver() {
  static std::atomic<CuPointerGetAttribute> cached{nullptr};
  if (auto fn = cached.load(std::memory_order_acquire)) return fn;
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  // Kept open: the reference taken by RTLD_NOLOAD pins the driver, which is never unloaded.
  auto fn = reinterpret_cast<CuPointerGetAttribute>(dlsym(driver, "cuPointerGetAttribute"));
  cached.store(fn, std::memory_order_release);
  return fn;
}

}  // namespace

std::string_view memory_type_name(MemoryType type) {
  return type == MemoryType::Device ? "device" : "host";
}

MemoryType memory_type_of(const void* pointer) {
  const CuPointerGetAttribute get_attribute = loaded_driver();
  if (get_attribute == nullptr || pointer == nullptr) return MemoryType::Host;
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  unsigned memory_type = 0;
  // Memory CUDA does not know (plain host memory) makes the call fail: host.
  if (get_attribute(&memory_type, kAttributeMemoryType, address) != 0 ||
      memory_type != kMemoryTypeDevice) {
    return MemoryType::Host;
  }
  int managed = 0;
  get_attribute(&managed, kAttributeIsManaged, address);
  return managed ? MemoryType::Host : MemoryType::Device;
}

}  // namespace coll
