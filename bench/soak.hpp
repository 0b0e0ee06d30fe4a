// collbench --soak N: N random operations (collective, size, type, op, algorithm, in or out of
// place, blocking, queued or fused), each checked exactly, with guard bytes around every buffer
// and the input of an out-of-place call checked unchanged; RSS sampled as it runs. Every rank
// draws the same operations from the seed, so a failure is reproduced by the seed alone.
#pragma once

#include <cstddef>

#include "coll/comm.hpp"
#include "options.hpp"

namespace collbench {

// Returns the problems found on all ranks together (wrong elements, overwritten guards, modified
// inputs) plus one when resident memory kept growing; 0 is a pass.
std::size_t run_soak(coll::Comm& comm, const SoakOptions& soak, const SweepOptions& sweep);

}  // namespace collbench
