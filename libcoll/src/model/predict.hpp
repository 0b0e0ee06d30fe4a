// Predicted all-reduce time of each algorithm libcoll implements, from the alpha-beta-gamma
// parameters and the job's shape, split into latency, bandwidth and reduction terms so that a
// choice can be explained. The formulas and their sources are documented in predict.cc.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/link_params.hpp"
#include "model/shape.hpp"

namespace coll::model {

struct Prediction {
  std::string algorithm;
  double latency_s = 0;    // the alpha terms
  double bandwidth_s = 0;  // the beta terms
  double reduction_s = 0;  // the gamma terms
  std::string detail;      // steps, link class, segments: what the terms were made of
  double total_s() const { return latency_s + bandwidth_s + reduction_s; }
};

struct PredictOptions {
  int ps_servers = 0;  // parameter server: number of co-located servers k; 0 means one per rank
};

// Seconds for an all-reduce of `bytes` bytes per rank; nullopt when `algorithm` has no formula.
std::optional<Prediction> predict(std::string_view algorithm, const CostParams& params,
                                  const Shape& shape, std::size_t bytes,
                                  const PredictOptions& options = {});

// The algorithm names predict() has a formula for.
const std::vector<std::string>& modeled_algorithms();

}  // namespace coll::model
