// Large copies between buffers that other cores touch. On x86-64 they use the CPU's string move
// (rep movsb), which moves whole lines without first reading the destination's old contents from
// the core that holds them; glibc's memcpy on AMD switches to vector loops above the L2 size and
// pays that read (docs/tuning.md, "Constants measured on the build VM").
#pragma once

#include <cstddef>
#include <cstring>

namespace coll {

inline void bulk_copy(void* to, const void* from, std::size_t bytes) {
#if defined(__x86_64__)
  constexpr std::size_t kStringMoveFrom = 64 << 10;  // below, memcpy's own choice is as good
  if (bytes >= kStringMoveFrom) {
    asm volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(bytes) : : "memory");
    return;
  }
#endif
  std::memcpy(to, from, bytes);
}

}  // namespace coll
