// Where the local launcher pins its rank processes (COLL_BIND), as mpirun --bind-to core does.
// Unpinned, ranks that outnumber the cores land on them differently from one launch to the next,
// and some placements slow a whole run: 4 ranks on 2 cores took 15.6-16.5 us per 8-byte
// all-reduce in 8 of 20 launches, against a median of 10.8; pinned, at most 10.1 in 20 of 20
// (docs/tuning.md, "Ranks pinned to cores").
#pragma once

#include <sched.h>

#include <vector>

namespace coll::tools {

// COLL_BIND: "core" (the default) pins rank r to the r-th CPU this process may run on, round
// robin (ranks 0 and 2 share the first of two cores, 1 and 3 the second); "none" leaves the
// ranks to the scheduler. Anything else throws InvalidArgument naming the variable.
bool pin_ranks_from_env();

// The CPU set rank `rank` of a job is pinned to: one CPU of those this process may run on, taken
// round robin in their order. Throws SystemError when the process's CPUs cannot be read.
cpu_set_t core_of_rank(int rank);

}  // namespace coll::tools
