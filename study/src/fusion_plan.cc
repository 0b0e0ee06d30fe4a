// Fusion policies.
//
// mgwfbp. MG-WFBP (Shi, Wang, Chu, INFOCOM'19, arXiv 1811.11141) merges the gradients of layer l
// into the next layer's message whenever the merged all-reduce finishes earlier under the WFBP
// timeline; its Algorithm 1 applies that rule greedily, layer by layer (plan_mgwfbp_greedy, a
// cost-function form of the rule). A greedy pass decides each merge on the schedule so far and
// can miss merges that only pay off later, so the policy solves the same problem exactly:
//   r_i      when tensor i's gradient is ready (profile.ready_s()), nondecreasing;
//   D(j, k)  duration of one all-reduce of tensors [j, k);
//   E(k)     earliest end of the all-reduces of tensors [0, k) over all contiguous partitions.
// A bucket [j, k) starts at max(r_{k-1}, E of everything before it) and ends D(j, k) later, and
// that end never decreases when the previous end grows. So the best partition of [0, k) with a
// last bucket [j, k) uses a best partition of [0, j), and
//   E(0) = 0,  E(k) = min over j < k of max(r_{k-1}, E(j)) + D(j, k).
// The plan follows the argmins back from E(n); iteration time = max(r_{n-1}, E(n)) = E(n). It is
// O(n^2) cost evaluations, any cost function, and ties go to the larger last bucket.
#include "study/fusion_plan.hpp"

#include "coll/env.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>

#include "coll/error.hpp"
#include "study/iteration_sim.hpp"

namespace coll::study {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Status::InvalidArgument, message);
}

std::string format_bytes(std::size_t bytes) {
  const char* suffixes = "GMK";
  for (int i = 0; i < 3; ++i) {
    const std::size_t unit = std::size_t{1} << (10 * (3 - i));
    if (bytes % unit == 0) return std::to_string(bytes / unit) + suffixes[i];
  }
  return std::to_string(bytes);
}

void check_profile(const std::vector<std::size_t>& tensor_bytes, const ComputeProfile& profile) {
  if (profile.backward_s.size() != tensor_bytes.size()) {
    invalid("compute profile (" + profile.source + ") has " +
            std::to_string(profile.backward_s.size()) + " entries, the model has " +
            std::to_string(tensor_bytes.size()) + " tensors");
  }
}

// Closes [first, last) into `buckets`.
void close_bucket(std::vector<Bucket>& buckets, std::size_t first, std::size_t last,
                  std::size_t bytes) {
  if (last > first) buckets.push_back({first, last, bytes});
}

// Consecutive tensors in buckets; a new bucket starts before tensor i (never the first) whenever
// starts_new(i, bytes of the open bucket) holds.
template <typename StartsNew>
std::vector<Bucket> split_before(const std::vector<std::size_t>& tensor_bytes,
                                 StartsNew starts_new) {
  std::vector<Bucket> buckets;
  std::size_t first = 0, bytes = 0;
  for (std::size_t i = 0; i < tensor_bytes.size(); ++i) {
    if (i > first && starts_new(i, bytes)) {
      close_bucket(buckets, first, i, bytes);
      first = i;
      bytes = 0;
    }
    bytes += tensor_bytes[i];
  }
  close_bucket(buckets, first, tensor_bytes.size(), bytes);
  return buckets;
}

}  // namespace

double allreduce_seconds(const AllreduceCost& cost, std::size_t bytes) {
  if (bytes == 0) return 0.0;
  const double seconds = cost(bytes);
  if (!(seconds >= 0) || !std::isfinite(seconds)) {
    invalid("all-reduce cost of " + std::to_string(bytes) + " bytes is not a finite time >= 0");
  }
  return seconds;
}

std::string Policy::text() const {
  switch (kind) {
    case PolicyKind::None:
      return "none";
    case PolicyKind::Layer:
      return "layer";
    case PolicyKind::Threshold:
      return "threshold:" + format_bytes(bytes);
    case PolicyKind::Buckets:
      return "buckets:" + format_bytes(bytes);
    case PolicyKind::MgWfbp:
      return "mgwfbp";
    case PolicyKind::Auto:
      return "auto";
  }
  return "?";
}

std::size_t parse_bytes(std::string_view text) {
  const auto value = parse_size(std::string(text));  // the one size syntax: 64, 4K, 25M, 1G
  if (!value || *value == 0) {
    invalid("byte count '" + std::string(text) + "' is not a positive size such as 64K or 25M");
  }
  return static_cast<std::size_t>(*value);
}

Policy parse_policy(std::string_view text) {
  if (text == "none") return {PolicyKind::None, 0};
  if (text == "layer") return {PolicyKind::Layer, 0};
  if (text == "mgwfbp") return {PolicyKind::MgWfbp, 0};
  if (text == "auto") return {PolicyKind::Auto, 0};
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  if (colon != std::string_view::npos && (name == "threshold" || name == "buckets")) {
    try {
      return {name == "threshold" ? PolicyKind::Threshold : PolicyKind::Buckets,
              parse_bytes(text.substr(colon + 1))};
    } catch (const Error& error) {
      invalid("fusion policy '" + std::string(text) + "': " + error.what());
    }
  }
  invalid("unknown fusion policy '" + std::string(text) +
          "' (expected none, layer, threshold:BYTES, buckets:BYTES, mgwfbp or auto; BYTES like "
          "25M)");
}

std::vector<Bucket> plan_none(const std::vector<std::size_t>& tensor_bytes) {
  std::vector<Bucket> buckets;
  for (std::size_t i = 0; i < tensor_bytes.size(); ++i)
    buckets.push_back({i, i + 1, tensor_bytes[i]});
  return buckets;
}

std::vector<Bucket> plan_layers(const std::vector<std::size_t>& tensor_bytes,
                                const std::vector<std::string>& tensor_layers) {
  if (tensor_layers.size() != tensor_bytes.size()) {
    invalid("fusion policy layer needs one layer name per tensor: got " +
            std::to_string(tensor_layers.size()) + " names for " +
            std::to_string(tensor_bytes.size()) + " tensors");
  }
  return split_before(tensor_bytes, [&](std::size_t i, std::size_t) {
    return tensor_layers[i] != tensor_layers[i - 1];
  });
}

std::vector<Bucket> plan_threshold(const std::vector<std::size_t>& tensor_bytes,
                                   std::size_t limit) {
  // Written so that it cannot overflow: open + t > limit.
  return split_before(tensor_bytes, [&](std::size_t i, std::size_t open) {
    return open > limit || tensor_bytes[i] > limit - open;
  });
}

std::vector<Bucket> plan_ddp_buckets(const std::vector<std::size_t>& tensor_bytes,
                                     std::size_t cap) {
  std::vector<Bucket> buckets;
  std::size_t first = 0, bytes = 0;
  std::size_t limit = std::min(kDdpFirstBucketBytes, cap);
  for (std::size_t i = 0; i < tensor_bytes.size(); ++i) {
    bytes += tensor_bytes[i];
    if (bytes >= limit) {
      close_bucket(buckets, first, i + 1, bytes);
      first = i + 1;
      bytes = 0;
      limit = cap;
    }
  }
  close_bucket(buckets, first, tensor_bytes.size(), bytes);
  return buckets;
}

std::vector<Bucket> plan_mgwfbp(const std::vector<std::size_t>& tensor_bytes,
                                const ComputeProfile& profile, const AllreduceCost& cost) {
  check_profile(tensor_bytes, profile);
  const std::size_t n = tensor_bytes.size();
  const std::vector<double> ready = profile.ready_s();
  std::vector<double> end(n + 1, 0.0);     // E(k)
  std::vector<std::size_t> cut(n + 1, 0);  // argmin j of E(k)
  for (std::size_t k = 1; k <= n; ++k) {
    end[k] = std::numeric_limits<double>::infinity();
    std::size_t bytes = 0;  // bytes of [j, k), growing as j goes down
    for (std::size_t j = k; j-- > 0;) {
      bytes += tensor_bytes[j];
      const double candidate = std::max(ready[k - 1], end[j]) + allreduce_seconds(cost, bytes);
      if (candidate <= end[k]) {  // <=: on ties prefer the smaller j, the larger last bucket
        end[k] = candidate;
        cut[k] = j;
      }
    }
  }
  std::vector<Bucket> buckets;
  for (std::size_t k = n; k > 0; k = cut[k]) {
    std::size_t bytes = 0;
    for (std::size_t i = cut[k]; i < k; ++i) bytes += tensor_bytes[i];
    buckets.push_back({cut[k], k, bytes});
  }
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

std::vector<Bucket> plan_mgwfbp_greedy(const std::vector<std::size_t>& tensor_bytes,
                                       const ComputeProfile& profile, const AllreduceCost& cost) {
  check_profile(tensor_bytes, profile);
  const std::vector<double> ready = profile.ready_s();
  std::vector<Bucket> buckets;
  double previous_end = 0;  // end of the last closed bucket's all-reduce
  std::size_t first = 0, bytes = 0;
  for (std::size_t i = 0; i < tensor_bytes.size(); ++i) {
    if (i > first) {
      const double open_end = std::max(ready[i - 1], previous_end) + allreduce_seconds(cost, bytes);
      const double separate_end =
          std::max(ready[i], open_end) + allreduce_seconds(cost, tensor_bytes[i]);
      const double merged_end =
          std::max(ready[i], previous_end) + allreduce_seconds(cost, bytes + tensor_bytes[i]);
      if (!(merged_end < separate_end)) {
        close_bucket(buckets, first, i, bytes);
        previous_end = open_end;
        first = i;
        bytes = 0;
      }
    }
    bytes += tensor_bytes[i];
  }
  close_bucket(buckets, first, tensor_bytes.size(), bytes);
  return buckets;
}

const std::vector<std::string>& auto_candidates() {
  static const std::vector<std::string> candidates{"none", "threshold:64M", "threshold:128M",
                                                   "buckets:25M", "mgwfbp"};
  return candidates;
}

FusionPlan make_plan(const Policy& policy, const std::vector<std::size_t>& tensor_bytes,
                     const ComputeProfile& profile, const AllreduceCost& cost,
                     const std::vector<std::string>& tensor_layers) {
  check_profile(tensor_bytes, profile);
  FusionPlan plan;
  plan.policy = policy.text();
  switch (policy.kind) {
    case PolicyKind::None:
      plan.buckets = plan_none(tensor_bytes);
      break;
    case PolicyKind::Layer:
      plan.buckets = plan_layers(tensor_bytes, tensor_layers);
      break;
    case PolicyKind::Threshold:
      plan.buckets = plan_threshold(tensor_bytes, policy.bytes);
      break;
    case PolicyKind::Buckets:
      plan.buckets = plan_ddp_buckets(tensor_bytes, policy.bytes);
      break;
    case PolicyKind::MgWfbp:
      plan.buckets = plan_mgwfbp(tensor_bytes, profile, cost);
      break;
    case PolicyKind::Auto: {
      std::ostringstream note;
      note << "auto:";
      double best = std::numeric_limits<double>::infinity();
      for (const std::string& candidate : auto_candidates()) {
        FusionPlan tried = make_plan(parse_policy(candidate), tensor_bytes, profile, cost);
        const double seconds = simulate_wfbp(tried.buckets, profile, cost).iteration_s;
        note << " " << candidate << " " << seconds << " s (" << tried.buckets.size()
             << " buckets);";
        if (seconds < best) {
          best = seconds;
          plan.policy = tried.policy;
          plan.buckets = std::move(tried.buckets);
        }
      }
      note << " chose " << plan.policy;
      plan.note = note.str();
      break;
    }
  }
  return plan;
}

void check_plan(const std::vector<Bucket>& buckets, const std::vector<std::size_t>& tensor_bytes) {
  std::size_t next = 0;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const Bucket& bucket = buckets[b];
    if (bucket.first != next || bucket.last <= bucket.first || bucket.last > tensor_bytes.size()) {
      invalid("fusion plan: bucket " + std::to_string(b) + " is [" + std::to_string(bucket.first) +
              ", " + std::to_string(bucket.last) +
              "), expected a non-empty range starting at tensor " + std::to_string(next));
    }
    std::size_t bytes = 0;
    for (std::size_t i = bucket.first; i < bucket.last; ++i) bytes += tensor_bytes[i];
    if (bytes != bucket.bytes) {
      invalid("fusion plan: bucket " + std::to_string(b) + " says " + std::to_string(bucket.bytes) +
              " bytes, its tensors hold " + std::to_string(bytes));
    }
    next = bucket.last;
  }
  if (next != tensor_bytes.size()) {
    invalid("fusion plan covers " + std::to_string(next) + " of " +
            std::to_string(tensor_bytes.size()) + " tensors");
  }
}

}  // namespace coll::study
