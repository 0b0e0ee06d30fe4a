// Sweep mode: nccl-tests-style table of a collective's time and bandwidth over message sizes.
#pragma once

#include "coll/comm.hpp"
#include "options.hpp"

namespace collbench {

// Runs on every rank; rank 0 prints and writes JSON. Returns the total wrong elements.
std::size_t run_sweep(coll::Comm& comm, const SweepOptions& options);

}  // namespace collbench
