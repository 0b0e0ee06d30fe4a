// Reading another rank's memory directly: one copy from its buffer into ours, no staging and no
// message. A transport offers it (Transport::peer_memory) for the ranks whose address space it can
// reach: ranks of one host through cross-memory attach, ranks that are threads of one process
// through a plain copy. Algorithms fall back to messages where it is missing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/shared_regions.hpp"

namespace coll {

class PeerMemory {
 public:
  virtual ~PeerMemory() = default;

  // Whether ranks `a` and `b` can read each other's memory. Every rank gets the same answer for
  // every pair (the transport agrees on it when it starts), so an algorithm that checks the pairs
  // of its group chooses the same path on every rank.
  virtual bool connects(int a, int b) const = 0;

  // Copies `bytes` at `remote`, an address in `peer`'s memory that the peer published (and
  // keeps valid and unchanged until told otherwise), into `local`. Throws coll::Error on failure.
  virtual void read(int peer, std::uint64_t remote, void* local, std::size_t bytes) = 0;

  // Where this rank can load `bytes` at `remote` in `peer`'s memory itself, with no copy: the
  // peer published them with `region`, the allocate_shared region holding them (fd -1: none).
  // Valid while the collective that asked runs; nullptr where they cannot be reached so (then
  // read() copies them).
  virtual const std::byte* view(int /*peer*/, const SharedRegionRef& /*region*/,
                                std::uint64_t /*remote*/, std::size_t /*bytes*/) {
    return nullptr;
  }

  // What one read costs besides its bytes (a system call for cross-memory attach), as the ranks
  // measured it together when they connected: the same on every rank, so the cost model's
  // choices agree. 0 where a read is a plain copy.
  virtual double read_call_seconds() const { return 0; }
};

// An address as published to peers.
inline std::uint64_t address_of(const void* pointer) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(pointer));
}

}  // namespace coll
