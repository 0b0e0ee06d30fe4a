// collbench --explain: the cost model's prediction for every algorithm at every size of the
// sweep, with its latency / bandwidth / reduction terms, and the algorithm it would choose.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "coll/comm.hpp"
#include "coll/model/link_params.hpp"
#include "options.hpp"

namespace collbench {

// Every rank calls it (so that a bad preset or calibration file fails on all of them); rank 0
// prints, before the measurements.
void print_explanation(const coll::Comm& comm, const SweepOptions& options);

// The parameters as a few '#' lines: alpha and beta per link class, gamma, and their source.
std::string describe_params(const coll::model::CostParams& params);

struct ModelPrediction {
  std::string algorithm;  // what ran: the default and "auto" resolved to a name
  double time_us = 0;
  double lead_us = 0;  // coll::model::Prediction::lead_s
};
// The model's time for `algorithm` ("" is the library's default) at `bytes` on this job;
// nullopt when the model has no formula for it or its parameters cannot be loaded.
std::optional<ModelPrediction> predict_for(const coll::Comm& comm, const std::string& algorithm,
                                           std::size_t bytes, bool buffers_mapped);

}  // namespace collbench
