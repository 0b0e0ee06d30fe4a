// Choosing the all-reduce algorithm: predict every candidate, take the fastest, say why.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/link_params.hpp"
#include "model/predict.hpp"
#include "model/shape.hpp"

namespace coll::model {

struct CandidateResult {
  std::string name;
  std::optional<Prediction> prediction;  // nullopt: no formula, skipped
  std::string note;                      // why it was skipped, when it was
};

struct Explanation {
  std::size_t bytes = 0;
  std::vector<CandidateResult> candidates;  // in the order given
  std::string winner;                       // empty when no candidate has a formula
  std::string reason;                       // one line
  const Prediction* winning() const;        // the winner's prediction, or nullptr
};

// Predicts every candidate; the fastest wins, ties going to the earlier candidate.
Explanation explain(const CostParams& params, const Shape& shape, std::size_t bytes,
                    const std::vector<std::string>& candidates);
std::string choose(const CostParams& params, const Shape& shape, std::size_t bytes,
                   const std::vector<std::string>& candidates);

// The registered algorithms this process can run (coll::allreduce_algorithms()), in order.
std::vector<std::string> registered_candidates();

// The parameters in use: COLL_COST_PRESET=name if set; else the calibration file
// (calibration_path()) if present and measured on this host; else the "this-vm" preset. `source`
// says which, and why a calibration file was passed over. Throws coll::Error on an unknown preset
// or a malformed calibration file.
CostParams resolve_params();
// resolve_params(), once per process.
const CostParams& params_in_use();

// The library's `auto`: the registered candidate predicted fastest for this job and size.
std::string choose_for(const std::vector<int>& node_of_rank, std::size_t bytes);

}  // namespace coll::model
