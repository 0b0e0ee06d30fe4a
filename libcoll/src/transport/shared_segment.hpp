// A shared-memory segment that the ranks of one host map together: the first rank of each group
// creates it under a random name, publishes the name through the bootstrap, the others open it,
// and the creator unlinks it once every rank has it mapped, so nothing is left in /dev/shm even
// when the job dies later. Fresh segments read as zeros.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace coll {

class Bootstrap;

class SharedSegment {
 public:
  // Collective over `bootstrap`: ranks with equal `group_of_rank` (indexed by rank) share one
  // segment of `bytes`. `purpose` names the segment and its bootstrap keys. Returns an unmapped
  // segment (and says why in `failure()`) on the ranks where creating or mapping failed; the
  // caller decides what the other ranks of the group make of that.
  static SharedSegment map_per_group(Bootstrap& bootstrap, const std::vector<int>& group_of_rank,
                                     const std::string& purpose, std::size_t bytes);

  SharedSegment() = default;
  SharedSegment(SharedSegment&& other) noexcept { *this = std::move(other); }
  SharedSegment& operator=(SharedSegment&& other) noexcept;
  ~SharedSegment();

  bool mapped() const { return base_ != nullptr; }
  void* base() const { return base_; }
  std::size_t bytes() const { return bytes_; }
  const std::string& failure() const { return failure_; }

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::string failure_;
};

}  // namespace coll
