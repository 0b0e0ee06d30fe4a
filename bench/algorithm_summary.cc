#include "algorithm_summary.hpp"

#include <algorithm>
#include <cstdio>

namespace collbench {
namespace {

// How much slower `auto` was than the fastest named algorithm, in percent, out of place or in
// place.
double auto_vs_best_pct(const SizeSummary& size, bool in_place = false) {
  const double best = in_place ? size.winner_in_place_us : size.winner_us;
  const double measured = in_place ? size.automatic->in_place_us : size.automatic->time_us;
  return best > 0 ? (measured - best) / best * 100 : 0;
}

// How often `auto` came within 10 % and 25 % of the fastest, over the sizes that measured it.
struct AutoVerdict {
  int within_10 = 0, within_25 = 0, sizes = 0, ran_winner = 0;
  double worst = 0;

  void add(double slower, bool ran_the_winner) {
    ++sizes;
    within_10 += slower <= 10 ? 1 : 0;
    within_25 += slower <= 25 ? 1 : 0;
    worst = std::max(worst, slower);
    ran_winner += ran_the_winner ? 1 : 0;
  }
  void print(const char* where) const {
    if (sizes == 0) return;
    std::printf(
        "# auto%s within 10%% of the fastest at %d of %d sizes, within 25%% at %d; worst "
        "%+.0f%%; it ran the fastest algorithm at %d\n",
        where, within_10, sizes, within_25, worst, ran_winner);
  }
};

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
    if (size == nullptr) size = &sizes.emplace_back(SizeSummary{.bytes = result.bytes});
    size->results.push_back(&result);
  }
  for (auto& size : sizes) {
    const AlgorithmResult* fastest = nullptr;
    const AlgorithmResult* fastest_in_place = nullptr;
    const AlgorithmResult* pick = nullptr;
    for (const AlgorithmResult* result : size.results) {
      if (result->algorithm == "auto" || result->algorithm == "default") {
        if (result->algorithm == "auto") size.automatic = result;
        continue;  // they run one of the others: not candidates themselves
      }
      if (fastest == nullptr || result->time_us < fastest->time_us) fastest = result;
      if (fastest_in_place == nullptr || result->in_place_us < fastest_in_place->in_place_us)
        fastest_in_place = result;
      if (result->predicted_us && (pick == nullptr || *result->predicted_us < *pick->predicted_us))
        pick = result;
    }
    if (fastest == nullptr) fastest = fastest_in_place = size.results.front();
    size.winner = fastest->algorithm;
    size.winner_us = fastest->time_us;
    size.winner_in_place = fastest_in_place->algorithm;
    size.winner_in_place_us = fastest_in_place->in_place_us;
    size.model_pick = pick != nullptr ? pick->algorithm : "";
  }
  return sizes;
}

void print_algorithm_summary(const std::vector<AlgorithmResult>& results) {
  std::printf(
      "#\n# Summary per size: out-of-place time of each algorithm, the cost model's "
      "prediction, error = (predicted - measured) / measured; then auto against the fastest, "
      "out of place and in place\n");
  std::printf("# %12s  %-24s %12s %14s %8s\n", "size (B)", "algorithm", "measured(us)",
              "predicted(us)", "error");
  int agree = 0, compared = 0;
  AutoVerdict out_of_place, in_place;
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
      // Where auto ran the winner itself, the difference is that algorithm measured twice.
      const char* noise = " (the same algorithm: this machine's noise)";
      const double slower = auto_vs_best_pct(size);
      const bool ran_winner = size.automatic->predicted_as == size.winner;
      out_of_place.add(slower, ran_winner);
      std::printf("# %12s  -> auto ran %s: %+.0f%% against %s%s\n", "",
                  size.automatic->predicted_as.c_str(), slower, size.winner.c_str(),
                  ran_winner ? noise : "");
      const double slower_in_place = auto_vs_best_pct(size, true);
      const bool ran_winner_in_place = size.automatic->ran_in_place == size.winner_in_place;
      in_place.add(slower_in_place, ran_winner_in_place);
      std::printf("# %12s  -> in place, auto ran %s: %+.0f%% against %s%s\n", "",
                  size.automatic->ran_in_place.c_str(), slower_in_place,
                  size.winner_in_place.c_str(), ran_winner_in_place ? noise : "");
    }
  }
  std::printf("# model's pick matched the measured winner at %d of %d sizes\n", agree, compared);
  out_of_place.print("");
  in_place.print(" in place");
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
    json.field("winner_in_place", size.winner_in_place);
    if (size.automatic != nullptr) {
      json.field("auto_ran", size.automatic->predicted_as)
          .field("auto_vs_best_pct", auto_vs_best_pct(size))
          .field("auto_ran_in_place", size.automatic->ran_in_place)
          .field("auto_vs_best_in_place_pct", auto_vs_best_pct(size, true));
    }
    json.begin_array("algorithms");
    for (const AlgorithmResult* result : size.results) {
      json.begin_object()
          .field("algorithm", result->algorithm)
          .field("time_us", result->time_us)
          .field("in_place_us", result->in_place_us);
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
