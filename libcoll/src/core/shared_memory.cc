#include "coll/shared_memory.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <string>

#include "coll/error.hpp"
#include "core/shared_regions.hpp"

namespace coll {
namespace {

constexpr std::size_t kPage = 4096;

class Registry {
 public:
  void add(const SharedRegionRef& region) {
    std::lock_guard lock(mutex_);
    regions_[region.base] = region;
  }

  std::optional<SharedRegionRef> remove(std::uint64_t base) {
    std::lock_guard lock(mutex_);
    const auto it = regions_.find(base);
    if (it == regions_.end()) return std::nullopt;
    const SharedRegionRef region = it->second;
    regions_.erase(it);
    return region;
  }

  std::optional<SharedRegionRef> holding(std::uint64_t address, std::uint64_t bytes) const {
    std::lock_guard lock(mutex_);
    auto it = regions_.upper_bound(address);
    if (it == regions_.begin()) return std::nullopt;
    const SharedRegionRef& region = std::prev(it)->second;
    if (address - region.base > region.size || bytes > region.base + region.size - address) {
      return std::nullopt;
    }
    return region;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, SharedRegionRef> regions_;  // by base address
};

Registry& registry() {
  static Registry instance;
  return instance;
}

std::uint64_t address_value(const void* pointer) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(pointer));
}

}  // namespace

void* allocate_shared(std::size_t bytes) {
  const std::size_t size = std::max(kPage, (bytes + kPage - 1) / kPage * kPage);
  const int fd = ::memfd_create("coll-shared", MFD_CLOEXEC);
  if (fd < 0) throw_system_error("memfd_create for a shared buffer");
  struct stat status {};
  void* mapped = MAP_FAILED;
  if (::ftruncate(fd, static_cast<off_t>(size)) == 0 && ::fstat(fd, &status) == 0) {
    mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  if (mapped == MAP_FAILED) {
    const int error = errno;
    ::close(fd);
    errno = error;
    throw_system_error("a shared buffer of " + std::to_string(size) + " bytes");
  }
  std::memset(mapped, 0, size);  // fault every page in now, not inside a timed collective
  registry().add({fd, static_cast<std::uint64_t>(status.st_ino), address_value(mapped), size});
  return mapped;
}

void free_shared(void* pointer) {
  if (pointer == nullptr) return;
  const auto region = registry().remove(address_value(pointer));
  if (!region) {
    throw Error(Status::InvalidArgument,
                "free_shared: the pointer did not come from allocate_shared (or was freed)");
  }
  ::munmap(pointer, region->size);
  ::close(static_cast<int>(region->fd));
}

std::optional<SharedRegionRef> shared_region_of(const void* address, std::size_t bytes) {
  return registry().holding(address_value(address), bytes);
}

}  // namespace coll
