// Pre-touched, reused memory. First touch of a page can be slow (on a VM whose balloon reclaims
// freed pages, docs/tuning.md, "Constants measured on the build VM"), so every staging or
// benchmark buffer comes from here: mapped once, faulted in once, handed out again and again.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace coll {

// Private: anonymous memory (huge pages advised). WithPeers: from allocate_shared
// (coll/shared_memory.hpp), which the ranks of one host can map (no huge pages there).
enum class Sharing { Private, WithPeers };

class PinnedRegion {  // one mapping, page-aligned, fully touched
 public:
  explicit PinnedRegion(std::size_t bytes, Sharing sharing = Sharing::Private);
  ~PinnedRegion();
  PinnedRegion(const PinnedRegion&) = delete;
  PinnedRegion& operator=(const PinnedRegion&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  std::byte* data_;
  std::size_t size_;
  Sharing sharing_;
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

  BufferPool() = default;
  explicit BufferPool(Sharing sharing) : sharing_(sharing) {}

  // A region of at least `bytes`: the smallest free one that fits, else a new one.
  Lease acquire(std::size_t bytes);
  std::size_t bytes_held() const;

 private:
  void give_back(std::unique_ptr<PinnedRegion> region);
  Sharing sharing_ = Sharing::Private;
  mutable std::mutex mutex_;  // the caller and the progress engine both lease
  std::vector<std::unique_ptr<PinnedRegion>> free_;
};

}  // namespace coll
