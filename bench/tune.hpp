// collbench --tune: measures every algorithm this process can run (the registry's, so a new one
// is included without touching this file) at the job's shape over the sweep's sizes, and writes
// the fastest per size into the decision table that `auto` reads (coll/model/decision_table.hpp).
#pragma once

#include "coll/comm.hpp"
#include "options.hpp"

namespace collbench {

// Every rank calls it; rank 0 prints, merges this shape's rules into the table file (the
// other shapes' rules are kept) and writes --json. Returns the process exit status.
int run_tune(coll::Comm& comm, const SweepOptions& options);

}  // namespace collbench
