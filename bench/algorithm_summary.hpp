// collbench --algo a,b,... | all: after the per-algorithm tables, one summary per size: each
// algorithm's measured time next to the cost model's prediction, the measured winner and the
// model's pick; and when `auto` was among them, how far it was from the fastest named algorithm,
// out of place and in place.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "coll/tools/json_writer.hpp"

namespace collbench {

struct AlgorithmResult {
  std::string algorithm;  // as asked ("default" for the library's default)
  std::size_t bytes = 0;
  double time_us = 0;                  // out-of-place, slowest rank
  std::optional<double> predicted_us;  // nullopt: the model has no formula
  std::string predicted_as;            // the algorithm the prediction is for (auto resolved)
  double in_place_us = 0;              // in place, slowest rank
  std::string ran_in_place;            // the algorithm it ran in place (auto resolved)
};

struct SizeSummary {
  std::size_t bytes = 0;
  std::string winner;  // fastest measured named algorithm (not auto or the default)
  double winner_us = 0;
  std::string winner_in_place;  // the same in place
  double winner_in_place_us = 0;
  std::string model_pick;  // fastest predicted among those with a prediction ("" if none)
  const AlgorithmResult* automatic = nullptr;  // the `auto` row, when measured
  std::vector<const AlgorithmResult*> results;
};

// Groups by size, in order of first appearance.
std::vector<SizeSummary> summarize(const std::vector<AlgorithmResult>& results);
void print_algorithm_summary(const std::vector<AlgorithmResult>& results);
// An array "summary" of {bytes, winner, model_pick, [auto_ran, auto_vs_best_pct,] algorithms:
// [{algorithm, time_us, predicted_us, error_pct}]}.
void write_algorithm_summary(coll::tools::JsonWriter& json,
                             const std::vector<AlgorithmResult>& results);

}  // namespace collbench
