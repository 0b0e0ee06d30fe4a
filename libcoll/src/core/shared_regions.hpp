// The registry of allocate_shared's regions: what a rank publishes so that a peer of its host can
// map a buffer lying inside one (the memfd's descriptor number in the owner, and the identity
// the peer checks after opening it through /proc).
#pragma once

#include <cstdint>
#include <optional>

namespace coll {

struct SharedRegionRef {
  std::int64_t fd = -1;     // in the owner's process; -1: not shared
  std::uint64_t inode = 0;  // the memfd's, checked by the peer that opens it
  std::uint64_t base = 0;   // the region's address in the owner
  std::uint64_t size = 0;   // bytes
};

// The region holding all of [address, address + bytes), if allocate_shared made one.
std::optional<SharedRegionRef> shared_region_of(const void* address, std::size_t bytes);

}  // namespace coll
