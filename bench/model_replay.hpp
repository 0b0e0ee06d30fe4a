// Model mode: one training iteration's gradient aggregation, replayed tensor by tensor in the
// order backward produces them (one all-reduce per tensor: the unfused baseline).
#pragma once

#include "coll/comm.hpp"
#include "options.hpp"

namespace collbench {

// Runs on every rank; rank 0 prints and writes JSON. Returns the total wrong elements.
std::size_t run_model_replay(coll::Comm& comm, const ReplayOptions& replay,
                             const SweepOptions& sweep);

}  // namespace collbench
