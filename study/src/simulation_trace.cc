// A simulated iteration as trace events; see simulation_trace.hpp.
#include "study/simulation_trace.hpp"

#include <string>

namespace coll::study {

using tools::TraceEvent;

std::vector<TraceEvent> simulation_events(const SimResult& result, const std::vector<Bucket>& plan,
                                          const ComputeProfile& profile, int rank) {
  std::vector<TraceEvent> events;
  double time = 0;
  for (std::size_t i = 0; i < profile.backward_s.size(); ++i) {
    const double duration = profile.backward_s[i];
    if (duration > 0) {
      events.push_back({rank,
                        "compute",
                        "backward " + std::to_string(i),
                        time,
                        duration,
                        {{"tensor", static_cast<double>(i)}}});
    }
    time += duration;
  }
  for (std::size_t b = 0; b < result.buckets.size() && b < plan.size(); ++b) {
    const BucketTiming& timing = result.buckets[b];
    events.push_back(
        {rank,
         "comm",
         "allreduce " + std::to_string(b),
         timing.start_s,
         timing.end_s - timing.start_s,
         {{"bytes", static_cast<double>(timing.bytes)},
          {"tensors", std::to_string(plan[b].first) + "-" + std::to_string(plan[b].last - 1)},
          {"ready_us", timing.ready_s * 1e6}}});
  }
  return events;
}

}  // namespace coll::study
