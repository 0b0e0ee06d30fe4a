// Memory the ranks of one host can map into each other's address space. An all-reduce whose
// buffers come from here lets peer_read's ranks load each other's data directly: no system call
// and no kernel copy per read (cross-memory attach needs both for any other buffer). Like
// ncclMemAlloc, it is an opt-in for the caller's hot buffers; any other buffer still works.
#pragma once

#include <cstddef>

namespace coll {

// At least `bytes` (rounded up to whole pages), zeroed and faulted in, backed by an anonymous
// shared file (memfd). Throws coll::Error (SystemError) when the system refuses.
void* allocate_shared(std::size_t bytes);

// Releases what allocate_shared returned; nullptr does nothing; any other pointer throws
// coll::Error (InvalidArgument). Peers that mapped it keep the pages alive until they drop the
// mapping (see docs/algorithms.md, peer_read).
void free_shared(void* pointer);

}  // namespace coll
