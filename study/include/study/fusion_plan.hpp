// Tensor fusion: grouping the gradient tensors (backward order) into buckets, each all-reduced as
// one message that starts when its last tensor is ready. The policies are one message per tensor,
// per layer (a layer's weight and bias together, as CNTK and Caffe's per-layer callbacks send),
// Horovod's Tensor Fusion, PyTorch DDP's buckets, MG-WFBP's optimal merging, and an `auto` that
// simulates them.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "study/compute_profile.hpp"

namespace coll::study {

struct Bucket {
  std::size_t first = 0, last = 0;  // tensor index range, backward order, [first, last)
  std::size_t bytes = 0;            // sum of the tensors' bytes
  bool operator==(const Bucket&) const = default;
};

// Seconds one all-reduce of `bytes` bytes takes (e.g. wrapping coll::model::predict).
using AllreduceCost = std::function<double(std::size_t bytes)>;
// cost(bytes), except that an empty bucket moves nothing and takes 0 s.
double allreduce_seconds(const AllreduceCost& cost, std::size_t bytes);

enum class PolicyKind { None, Layer, Threshold, Buckets, MgWfbp, Auto };

struct Policy {
  PolicyKind kind = PolicyKind::None;
  std::size_t bytes = 0;     // Threshold, Buckets: the byte limit (> 0)
  std::string text() const;  // canonical form, e.g. "threshold:134217728"
};

// "none" | "layer" | "threshold:BYTES" | "buckets:BYTES" | "mgwfbp" | "auto"; BYTES is a positive
// integer with an optional K, M or G suffix (binary: 25M = 25 MiB). Throws
// coll::Error(InvalidArgument) naming the text when malformed.
Policy parse_policy(std::string_view text);
std::size_t parse_bytes(std::string_view text);  // the BYTES part alone, same errors

// Horovod's default fusion threshold (128 MiB) and DDP's bucket cap and first bucket.
inline constexpr std::size_t kHorovodFusionBytes = std::size_t{128} << 20;
inline constexpr std::size_t kDdpBucketCapBytes = std::size_t{25} << 20;
inline constexpr std::size_t kDdpFirstBucketBytes = std::size_t{1} << 20;

// none: one bucket per tensor.
std::vector<Bucket> plan_none(const std::vector<std::size_t>& tensor_bytes);
// layer: one bucket per run of consecutive tensors with the same layer name (tensor_layers, one
// per tensor; InvalidArgument when the sizes differ).
std::vector<Bucket> plan_layers(const std::vector<std::size_t>& tensor_bytes,
                                const std::vector<std::string>& tensor_layers);
// threshold:B (Horovod Tensor Fusion, by size): consecutive tensors fill a buffer until adding the
// next would take it past B; a tensor larger than B goes alone.
std::vector<Bucket> plan_threshold(const std::vector<std::size_t>& tensor_bytes, std::size_t limit);
// buckets:B (DDP, reducer.cpp compute_bucket_assignment_by_size): tensors are added in order and
// a bucket closes as soon as it holds >= its limit; the first bucket's limit is min(1 MiB, B),
// later ones B. So a bucket exceeds its limit by at most its last tensor, as in DDP.
std::vector<Bucket> plan_ddp_buckets(const std::vector<std::size_t>& tensor_bytes, std::size_t cap);
// mgwfbp: the contiguous partition with the earliest WFBP finish (see fusion_plan.cc), exact.
std::vector<Bucket> plan_mgwfbp(const std::vector<std::size_t>& tensor_bytes,
                                const ComputeProfile& profile, const AllreduceCost& cost);
// The MG-WFBP paper's greedy rule (Shi et al., INFOCOM'19, Algorithm 1, generalised to any cost
// function): walking backward order, merge the next tensor into the open bucket whenever the
// merged all-reduce finishes earlier than the two separately. Kept for comparison; not optimal.
std::vector<Bucket> plan_mgwfbp_greedy(const std::vector<std::size_t>& tensor_bytes,
                                       const ComputeProfile& profile, const AllreduceCost& cost);

struct FusionPlan {
  std::string policy;  // the policy that made the buckets (for auto: the one it chose)
  std::vector<Bucket> buckets;
  std::string note;  // auto: every candidate's simulated iteration time; else empty
};

// The candidates auto compares, in order (ties go to the earlier one).
const std::vector<std::string>& auto_candidates();

// Plans with any policy. The profile must have one entry per tensor (else InvalidArgument); the
// layer policy needs tensor_layers (one name per tensor), the others ignore it.
FusionPlan make_plan(const Policy& policy, const std::vector<std::size_t>& tensor_bytes,
                     const ComputeProfile& profile, const AllreduceCost& cost,
                     const std::vector<std::string>& tensor_layers = {});

// Throws coll::Error(InvalidArgument) unless the buckets cover tensors 0..n-1 exactly once, in
// order, non-empty, with bytes equal to the sum of their tensors.
void check_plan(const std::vector<Bucket>& buckets, const std::vector<std::size_t>& tensor_bytes);

}  // namespace coll::study
