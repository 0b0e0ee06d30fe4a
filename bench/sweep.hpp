// Sweep mode: nccl-tests-style table of all-reduce time and bandwidth over message sizes.
#pragma once

#include "coll/comm.hpp"
#include "options.hpp"

namespace collbench {

// Runs on every rank; rank 0 prints and writes JSON. Returns the total wrong elements.
std::size_t run_sweep(coll::Comm& comm, const Options& options);

// nccl-tests' bus bandwidth factor for all-reduce: 2(n-1)/n.
double allreduce_bus_factor(int ranks);

}  // namespace collbench
