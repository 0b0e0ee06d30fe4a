// Splits `count` elements into `parts` contiguous blocks whose sizes differ by at most one
// (the first count % parts blocks get the extra element).
#pragma once

#include <cstddef>

namespace coll {

class Partition {
 public:
  Partition(std::size_t count, std::size_t parts)
      : base_(parts == 0 ? 0 : count / parts), extra_(parts == 0 ? 0 : count % parts) {}
  std::size_t offset(std::size_t block) const {
    return block * base_ + (block < extra_ ? block : extra_);
  }
  std::size_t length(std::size_t block) const { return base_ + (block < extra_ ? 1 : 0); }
  std::size_t max_length() const { return base_ + (extra_ > 0 ? 1 : 0); }

 private:
  std::size_t base_;
  std::size_t extra_;
};

}  // namespace coll
