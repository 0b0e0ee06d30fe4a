// The WFBP timeline model; see iteration_sim.hpp.
#include "study/iteration_sim.hpp"

#include <algorithm>
#include <string>

#include "coll/error.hpp"

namespace coll::study {
namespace {

void check_covers(const std::vector<Bucket>& buckets, std::size_t tensors) {
  std::size_t next = 0;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    if (buckets[b].first != next || buckets[b].last <= buckets[b].first) {
      throw Error(Status::InvalidArgument,
                  "fusion plan: bucket " + std::to_string(b) + " is [" +
                      std::to_string(buckets[b].first) + ", " + std::to_string(buckets[b].last) +
                      "), expected a non-empty range starting at tensor " + std::to_string(next));
    }
    next = buckets[b].last;
  }
  if (next != tensors) {
    throw Error(Status::InvalidArgument, "fusion plan covers " + std::to_string(next) +
                                             " tensors, the compute profile has " +
                                             std::to_string(tensors));
  }
}

SimResult simulate(const std::vector<Bucket>& buckets, const ComputeProfile& profile,
                   const AllreduceCost& cost, const AllreduceLead& lead, bool overlap) {
  check_covers(buckets, profile.backward_s.size());
  const std::vector<double> ready = profile.ready_s();
  SimResult result;
  result.backward_s = ready.empty() ? 0.0 : ready.back();
  double previous_end = 0, previous_lead = 0;
  for (const Bucket& bucket : buckets) {
    BucketTiming timing;
    timing.bytes = bucket.bytes;
    timing.ready_s = overlap ? ready[bucket.last - 1] : result.backward_s;
    const double duration = allreduce_seconds(cost, bucket.bytes);
    const double own_lead = lead && bucket.bytes > 0 ? lead(bucket.bytes) : 0.0;
    const double ahead = std::min({previous_lead, own_lead, duration});
    timing.start_s = std::max(timing.ready_s, previous_end - ahead);
    timing.end_s = timing.start_s + duration;
    result.comm_s += timing.end_s - std::max(timing.start_s, previous_end);
    previous_end = timing.end_s;
    previous_lead = own_lead;
    result.buckets.push_back(timing);
  }
  result.iteration_s = std::max(result.backward_s, previous_end);
  result.exposed_s = result.iteration_s - result.backward_s;
  result.hidden_fraction = result.comm_s > 0 ? 1.0 - result.exposed_s / result.comm_s : 1.0;
  return result;
}

}  // namespace

SimResult simulate_wfbp(const std::vector<Bucket>& buckets, const ComputeProfile& profile,
                        const AllreduceCost& cost, const AllreduceLead& lead) {
  return simulate(buckets, profile, cost, lead, true);
}

SimResult simulate_no_overlap(const std::vector<Bucket>& buckets, const ComputeProfile& profile,
                              const AllreduceCost& cost, const AllreduceLead& lead) {
  return simulate(buckets, profile, cost, lead, false);
}

}  // namespace coll::study
