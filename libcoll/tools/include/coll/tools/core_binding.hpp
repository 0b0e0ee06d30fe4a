// Where the local launcher pins its rank processes (COLL_BIND), as mpirun --bind-to core does.
// Unpinned, ranks that outnumber the cores land on them differently from one launch to the next,
// and some placements slow a whole run (measured: docs/tuning.md, "Ranks pinned to cores").
#pragma once

#include <sched.h>

#include <vector>

namespace coll::tools {

class RankPinning {
 public:
  // COLL_BIND: "core" (the default) pins rank r to the r-th CPU this process may run on, round
  // robin (ranks 0 and 2 share the first of two cores, 1 and 3 the second); "none" leaves the
  // ranks to the scheduler. Anything else throws InvalidArgument naming the variable; a process
  // whose CPUs cannot be read throws SystemError.
  static RankPinning from_env();

  // The CPU set rank `rank` is pinned to, or null when ranks are left to the scheduler.
  const cpu_set_t* core_of(int rank) const;

 private:
  std::vector<cpu_set_t> cores_;  // one single-CPU set per CPU this process may use; empty: none
};

}  // namespace coll::tools
