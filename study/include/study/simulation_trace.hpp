// A simulated iteration (iteration_sim.hpp) as Chrome trace events (the tools library's
// coll/tools/chrome_trace.hpp writes them), so --model-only --trace shows the modelled timeline
// as a replay's trace shows the measured one.
#pragma once

#include <vector>

#include "coll/tools/chrome_trace.hpp"
#include "study/compute_profile.hpp"
#include "study/iteration_sim.hpp"

namespace coll::study {

// One "compute" event per layer (a run of tensors that starts with a non-zero backward time)
// named "backward <first tensor index>", and one "comm" event per bucket named
// "allreduce <bucket index>" with its bytes and tensor range as arguments.
std::vector<tools::TraceEvent> simulation_events(const SimResult& result,
                                                 const std::vector<Bucket>& plan,
                                                 const ComputeProfile& profile, int rank);

}  // namespace coll::study
