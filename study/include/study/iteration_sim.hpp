// The WFBP timeline (Shi et al.'s performance model, as the project's reference summarizes it in
// the form the group's later code uses): backward makes gradients ready one after
// another; each bucket's all-reduce starts once its last tensor is ready and the previous
// all-reduce is done, and runs for cost(bytes); the iteration's backward-plus-communication ends
// when both backward and the last all-reduce have. Back to back, an all-reduce may start before
// the previous one ends by the lead both allow (coll::model::Prediction::lead_s). The
// non-overlapped case (SyncEASGD: every all-reduce after the whole backward) is the same with every
// ready time moved to the end.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "study/compute_profile.hpp"
#include "study/fusion_plan.hpp"

namespace coll::study {

struct BucketTiming {
  double ready_s = 0;  // its last tensor's gradient is ready
  double start_s = 0;  // max(ready, end of the previous all-reduce - their lead)
  double end_s = 0;    // start + cost(bytes)
  std::size_t bytes = 0;
};

struct SimResult {
  double backward_s = 0;       // end of backward (sum of the profile)
  double comm_s = 0;           // sum of all-reduce durations, each from the previous one's end
  double iteration_s = 0;      // max(end of backward, end of the last all-reduce)
  double exposed_s = 0;        // iteration - backward: the model's t_c, communication not hidden
  double hidden_fraction = 1;  // 1 - exposed / comm; 1 when there is no communication
  std::vector<BucketTiming> buckets;
};

// How long an all-reduce of `bytes` may overlap one of its kind run back to back with it (the
// smaller of the two's leads is used); an empty function: none.
using AllreduceLead = std::function<double(std::size_t bytes)>;

// The overlapped (WFBP) timeline. The plan must pass check_plan for the profile's tensor count
// (tensor bytes are taken from the buckets); throws coll::Error(InvalidArgument) otherwise.
SimResult simulate_wfbp(const std::vector<Bucket>& buckets, const ComputeProfile& profile,
                        const AllreduceCost& cost, const AllreduceLead& lead = {});
// Every all-reduce waits for the end of backward.
SimResult simulate_no_overlap(const std::vector<Bucket>& buckets, const ComputeProfile& profile,
                              const AllreduceCost& cost, const AllreduceLead& lead = {});

}  // namespace coll::study
