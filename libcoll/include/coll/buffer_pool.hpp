// Pre-touched, reused memory. On this class of VM, first touch of a page costs ~12 us (the
// balloon reclaims freed pages), so every staging or benchmark buffer comes from here: mapped
// once, faulted in once, handed out again and again.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace coll {

class PinnedRegion {  // one mapping, page-aligned, huge pages advised, fully touched
 public:
  explicit PinnedRegion(std::size_t bytes);
  ~PinnedRegion();
  PinnedRegion(const PinnedRegion&) = delete;
  PinnedRegion& operator=(const PinnedRegion&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  std::byte* data_;
  std::size_t size_;
};

class BufferPool {
 public:
  class Lease {  // returns its region to the pool when destroyed
   public:
    Lease(BufferPool* pool, std::unique_ptr<PinnedRegion> region)
        : pool_(pool), region_(std::move(region)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = default;
    ~Lease();
    std::byte* data() const { return region_->data(); }
    std::size_t size() const { return region_->size(); }

   private:
    BufferPool* pool_;
    std::unique_ptr<PinnedRegion> region_;
  };

  // A region of at least `bytes`: the smallest free one that fits, else a new one.
  Lease acquire(std::size_t bytes);
  std::size_t bytes_held() const;

 private:
  void give_back(std::unique_ptr<PinnedRegion> region);
  mutable std::mutex mutex_;  // the caller and the progress engine both lease
  std::vector<std::unique_ptr<PinnedRegion>> free_;
};

}  // namespace coll
