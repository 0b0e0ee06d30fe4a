#include "coll/buffer_pool.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "coll/error.hpp"
#include "coll/shared_memory.hpp"

namespace coll {
namespace {
constexpr std::size_t kHugePage = 2u << 20;
constexpr std::size_t kPage = 4096;
}  // namespace

PinnedRegion::PinnedRegion(std::size_t bytes, Sharing sharing)
    : data_(nullptr),
      size_(std::max<std::size_t>(kPage, (bytes + kPage - 1) / kPage * kPage)),
      sharing_(sharing) {
  if (sharing_ == Sharing::WithPeers) {
    data_ = static_cast<std::byte*>(allocate_shared(size_));
    return;
  }
  void* mapped = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw_system_error("mmap of " + std::to_string(size_) + " bytes");
  if (size_ >= kHugePage) ::madvise(mapped, size_, MADV_HUGEPAGE);
  data_ = static_cast<std::byte*>(mapped);
  std::memset(data_, 0, size_);  // fault every page in now, not inside a timed collective
}

PinnedRegion::~PinnedRegion() {
  if (sharing_ == Sharing::WithPeers) {
    free_shared(data_);
  } else {
    ::munmap(data_, size_);
  }
}

BufferPool::Lease::~Lease() {
  if (pool_ != nullptr && region_) pool_->give_back(std::move(region_));
}

BufferPool::Lease BufferPool::acquire(std::size_t bytes) {
  std::unique_lock lock(mutex_);
  auto best = free_.end();
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if ((*it)->size() >= bytes && (best == free_.end() || (*it)->size() < (*best)->size())) {
      best = it;
    }
  }
  if (best != free_.end()) {
    auto region = std::move(*best);
    free_.erase(best);
    return Lease(this, std::move(region));
  }
  lock.unlock();  // faulting in a new region is slow: do not hold others up
  return Lease(this, std::make_unique<PinnedRegion>(bytes, sharing_));
}

void BufferPool::give_back(std::unique_ptr<PinnedRegion> region) {
  std::lock_guard lock(mutex_);
  free_.push_back(std::move(region));
}

std::size_t BufferPool::bytes_held() const {
  std::lock_guard lock(mutex_);
  std::size_t total = 0;
  for (const auto& region : free_) total += region->size();
  return total;
}

}  // namespace coll
