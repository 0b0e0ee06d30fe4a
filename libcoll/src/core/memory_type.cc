#include "core/memory_type.hpp"

#include <dlfcn.h>
#include <link.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <atomic>
#include <cstdint>
#include <cstring>

namespace coll {
namespace {

// cuPointerGetAttribute by its documented C signature and constants (cuda.h), so that libcoll
// neither needs CUDA's headers to build nor its libraries to load.
using CuPointerGetAttribute = int (*)(void* data, int attribute, unsigned long long pointer);
constexpr int kAttributeMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttributeIsManaged = 8;     // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr unsigned kMemoryTypeDevice = 2;  // CU_MEMORYTYPE_DEVICE

// How many objects the dynamic loader has loaded so far (glibc's dlpi_adds): cheap to read, as
// the walk stops at the first object.
unsigned long long loader_additions() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;
      },
      &adds);
  return adds;
}

bool driver_among_loaded_objects() {
  return dl_iterate_phdr(
             [](dl_phdr_info* info, std::size_t, void*) {
               return std::strstr(info->dlpi_name, "/libcuda.so") != nullptr ? 1 : 0;
             },
             nullptr) != 0;
}

// Walking the loader's list (dl_iterate_phdr takes its lock) cost a sixth of a small all-reduce:
// it is walked at most once per about a millisecond of the time-stamp counter, and every
// kRecheckCalls calls should the counter stall. A driver loaded in between cannot have handed out
// device memory yet: cuInit alone takes tens of milliseconds.
constexpr unsigned long long kRecheckCycles = 1ull << 21;
constexpr unsigned kRecheckCalls = 4096;

bool loader_worth_walking() {
#if defined(__x86_64__)
  static std::atomic<unsigned long long> next_walk{0};
  static std::atomic<unsigned> calls{0};
  const unsigned long long now = __rdtsc();
  if (now < next_walk.load(std::memory_order_relaxed) &&
      calls.fetch_add(1, std::memory_order_relaxed) % kRecheckCalls != 0) {
    return false;
  }
  next_walk.store(now + kRecheckCycles, std::memory_order_relaxed);
  return true;
#else
  return true;
#endif
}

// The driver's entry point once some code of this process has loaded libcuda.so.1; null before.
// Looked for again whenever the loader has loaded more objects: CUDA may be initialized after the
// communicator was made. (dlopen with RTLD_NOLOAD would answer too, but searches the file system
// each time the driver is absent: far too slow for every collective.)
CuPointerGetAttribute loaded_driver() {
  static std::atomic<CuPointerGetAttribute> cached{nullptr};
  static std::atomic<unsigned long long> additions_seen{~0ull};
  if (auto fn = cached.load(std::memory_order_acquire)) return fn;
  if (!loader_worth_walking()) return nullptr;
  const unsigned long long additions = loader_additions();
  if (additions_seen.exchange(additions) == additions || !driver_among_loaded_objects()) {
    return nullptr;
  }
  // Loaded already, so this only takes a reference, which pins the driver (never unloaded).
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  auto fn = reinterpret_cast<CuPointerGetAttribute>(dlsym(driver, "cuPointerGetAttribute"));
  cached.store(fn, std::memory_order_release);
  return fn;
}

}  // namespace

std::string_view memory_type_name(MemoryType type) {
  return type == MemoryType::Device ? "device" : "host";
}

namespace {

MemoryType type_with(CuPointerGetAttribute get_attribute, const void* pointer) {
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

}  // namespace

MemoryType memory_type_of(const void* pointer) {
  return type_with(loaded_driver(), pointer);
}

std::pair<MemoryType, MemoryType> memory_types_of(const void* first, const void* second) {
  const CuPointerGetAttribute get_attribute = loaded_driver();
  const MemoryType of_first = type_with(get_attribute, first);
  return {of_first, second == first ? of_first : type_with(get_attribute, second)};
}

}  // namespace coll
