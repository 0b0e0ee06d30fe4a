// A heap buffer with guard bytes on both sides: a collective that writes (or a reduction that
// runs) past its buffer changes them, and intact() says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace collbench {

class GuardedBuffer {
 public:
  static constexpr std::size_t kGuardBytes = 64;

  explicit GuardedBuffer(std::size_t bytes = 0) : bytes_(bytes), storage_(bytes + 2 * kGuardBytes) {
    for (std::size_t i = 0; i < kGuardBytes; ++i) {
      storage_[i] = guard_byte(i);
      storage_[kGuardBytes + bytes_ + i] = guard_byte(i);
    }
  }

  std::byte* data() { return storage_.data() + kGuardBytes; }
  const std::byte* data() const { return storage_.data() + kGuardBytes; }
  std::size_t bytes() const { return bytes_; }

  bool intact() const {
    for (std::size_t i = 0; i < kGuardBytes; ++i) {
      if (storage_[i] != guard_byte(i) || storage_[kGuardBytes + bytes_ + i] != guard_byte(i)) {
        return false;
      }
    }
    return true;
  }

 private:
  // Not a value any exact input or result takes in a run of bytes (nor all zeros).
  static std::byte guard_byte(std::size_t i) { return std::byte(0xa5 ^ (i * 37)); }

  std::size_t bytes_;
  std::vector<std::byte> storage_;
};

}  // namespace collbench
