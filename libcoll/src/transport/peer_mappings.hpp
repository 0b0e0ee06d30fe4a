// Peers' allocate_shared regions mapped into this process, read-only: opened through
// /proc/<pid>/fd/<fd> (the owner keeps the memfd open while the region lives) and checked against
// the inode and size the owner published. A mapping is kept, most recently used first, so that a
// buffer used again costs nothing; past `capacity` the least recently used one is dropped, and
// the owner sizes it so that no collective's mappings are dropped while it runs. A peer whose
// region cannot be opened (a policy on /proc) is not tried again: its reads take the system call.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <vector>

#include "core/shared_regions.hpp"

namespace coll {

class PeerMappings {
 public:
  PeerMappings(int me, int ranks, std::size_t capacity)
      : me_(me), refused_(static_cast<std::size_t>(ranks)), capacity_(capacity) {}
  ~PeerMappings();
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;

  // `bytes` at `remote` in `peer` (process `pid`), inside `region` as the peer published it:
  // where this process sees them, or nullptr where the region cannot be mapped.
  const std::byte* view(int peer, pid_t pid, const SharedRegionRef& region, std::uint64_t remote,
                        std::size_t bytes);

 private:
  struct Mapping {
    int peer;
    SharedRegionRef region;
    std::byte* data;
  };
  const std::byte* map(int peer, pid_t pid, const SharedRegionRef& region);

  int me_;
  std::mutex mutex_;  // communicators that share a transport run collectives concurrently
  std::list<Mapping> mappings_;  // most recently used first
  std::vector<bool> refused_;    // by peer
  std::size_t capacity_;
};

}  // namespace coll
