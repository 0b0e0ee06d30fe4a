#include "algorithm_summary.hpp"

#include <algorithm>
#include <cstdio>

namespace collbench {
namespace {

// How much slower `auto` was than the fastest named algorithm, in percent.
double auto_vs_best_pct(const SizeSummary& size) {
  return size.winner_us > 0 ? (size.automatic->time_us - size.winner_us) / size.winner_us * 100 : 0;
}

// The model's error relative to the measurement, in percent.
std::optional<double> error_pct(const AlgorithmResult& result) {
  if (!result.predicted_us || result.time_us <= 0) return std::nullopt;
  return (*result.predicted_us - result.time_us) / result.time_us * 100;
}

}  // namespace

std::vector<SizeSummary> summarize(const std::vector<AlgorithmResult>& results) {
  std::vector<SizeSummary> sizes;
  for (const auto& result : results) {
    SizeSummary* size = nullptr;
    for (auto& candidate : sizes) {
      if (candidate.bytes == result.bytes) size = &candidate;
    }
    if (size == nullptr) size = &sizes.emplace_back(SizeSummary{result.bytes, {}, {}, {}});
    size->results.push_back(&result);
  }
  for (auto& size : sizes) {
    const AlgorithmResult* fastest = nullptr;
    const AlgorithmResult* pick = nullptr;
    for (const AlgorithmResult* result : size.results) {
      if (result->algorithm == "auto" || result->algorithm == "default") {
        if (result->algorithm == "auto") size.automatic = result;
        continue;  // they run one of the others: not candidates themselves
      }
      if (fastest == nullptr || result->time_us < fastest->time_us) fastest = result;
      if (result->predicted_us && (pick == nullptr || *result->predicted_us < *pick->predicted_us))
        pick = result;
    }
    if (fastest == nullptr) fastest = size.results.front();
    size.winner = fastest->algorithm;
    size.winner_us = fastest->time_us;
    size.model_pick = pick != nullptr ? pick->algorithm : "";
  }
  return sizes;
}

void print_algorithm_summary(const std::vector<AlgorithmResult>& results) {
  std::printf(
      "#\n# Summary per size: out-of-place time of each algorithm, the cost model's "
      "prediction, error = (predicted - measured) / measured\n");
  std::printf("# %12s  %-24s %12s %14s %8s\n", "size (B)", "algorithm", "measured(us)",
              "predicted(us)", "error");
  int agree = 0, compared = 0, auto_within_10 = 0, auto_within_25 = 0, auto_sizes = 0,
      auto_ran_winner = 0;
  double auto_worst = 0;
  for (const auto& size : summarize(results)) {
    bool first = true;
    for (const AlgorithmResult* result : size.results) {
      std::string name = result->algorithm;
      if (!result->predicted_as.empty() && result->predicted_as != name) {
        name += " (" + result->predicted_as + ")";
      }
      char predicted[32] = "-", error[32] = "-";
      if (result->predicted_us)
        std::snprintf(predicted, sizeof predicted, "%.2f", *result->predicted_us);
      if (const auto e = error_pct(*result)) std::snprintf(error, sizeof error, "%+.0f%%", *e);
      std::printf("# %12s  %-24s %12.2f %14s %8s\n",
                  first ? std::to_string(size.bytes).c_str() : "", name.c_str(), result->time_us,
                  predicted, error);
      first = false;
    }
    const bool agrees = size.model_pick == size.winner;
    if (!size.model_pick.empty()) {
      ++compared;
      agree += agrees ? 1 : 0;
    }
    std::printf("# %12s  -> winner: %s; model's pick: %s%s\n", "", size.winner.c_str(),
                size.model_pick.empty() ? "none" : size.model_pick.c_str(),
                size.model_pick.empty() ? "" : (agrees ? " (agrees)" : " (differs)"));
    if (size.automatic != nullptr) {
      const double slower = auto_vs_best_pct(size);
      ++auto_sizes;
      auto_within_10 += slower <= 10 ? 1 : 0;
      auto_within_25 += slower <= 25 ? 1 : 0;
      auto_worst = std::max(auto_worst, slower);
      // Where auto ran the winner itself, the difference is that algorithm measured twice.
      const bool ran_winner = size.automatic->predicted_as == size.winner;
      auto_ran_winner += ran_winner ? 1 : 0;
      std::printf("# %12s  -> auto ran %s: %+.0f%% against %s%s\n", "",
                  size.automatic->predicted_as.c_str(), slower, size.winner.c_str(),
                  ran_winner ? " (the same algorithm: this machine's noise)" : "");
    }
  }
  std::printf("# model's pick matched the measured winner at %d of %d sizes\n", agree, compared);
  if (auto_sizes > 0) {
    std::printf(
        "# auto within 10%% of the fastest at %d of %d sizes, within 25%% at %d; worst "
        "%+.0f%%; it ran the fastest algorithm at %d\n",
        auto_within_10, auto_sizes, auto_within_25, auto_worst, auto_ran_winner);
  }
  std::fflush(stdout);
}

void write_algorithm_summary(coll::tools::JsonWriter& json,
                             const std::vector<AlgorithmResult>& results) {
  json.begin_array("summary");
  for (const auto& size : summarize(results)) {
    json.begin_object()
        .field("bytes", size.bytes)
        .field("winner", size.winner)
        .field("model_pick", size.model_pick);
    if (size.automatic != nullptr) {
      json.field("auto_ran", size.automatic->predicted_as)
          .field("auto_vs_best_pct", auto_vs_best_pct(size));
    }
    json.begin_array("algorithms");
    for (const AlgorithmResult* result : size.results) {
      json.begin_object().field("algorithm", result->algorithm).field("time_us", result->time_us);
      if (result->predicted_us) {
        json.field("predicted_us", *result->predicted_us)
            .field("predicted_as", result->predicted_as)
            .field("error_pct", *error_pct(*result));
      }
      json.end_object();
    }
    json.end_array().end_object();
  }
  json.end_array();
}

}  // namespace collbench
