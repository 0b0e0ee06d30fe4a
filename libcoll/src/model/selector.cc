#include "model/selector.hpp"

#include <cstdio>
#include <map>
#include <mutex>

#include "algorithms/registry.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "model/calibration.hpp"
#include "model/preset.hpp"

namespace coll::model {
namespace {

std::string microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
  return text;
}

std::string dominant_term(const Prediction& p) {
  const double total = p.total_s();
  if (total <= 0) return "nothing to move";
  const char* name = "latency (alpha)";
  double part = p.latency_s;
  if (p.bandwidth_s > part) name = "bandwidth (beta)", part = p.bandwidth_s;
  if (p.reduction_s > part) name = "reduction (gamma)", part = p.reduction_s;
  char text[64];
  std::snprintf(text, sizeof text, "%s %.0f%%", name, 100 * part / total);
  return text;
}

}  // namespace

const Prediction* Explanation::winning() const {
  for (const auto& candidate : candidates) {
    if (candidate.name == winner && candidate.prediction) return &*candidate.prediction;
  }
  return nullptr;
}

Explanation explain(const CostParams& params, const Shape& shape, std::size_t bytes,
                    const std::vector<std::string>& candidates) {
  Explanation out;
  out.bytes = bytes;
  const Prediction* best = nullptr;
  const Prediction* second = nullptr;
  for (const auto& name : candidates) {
    CandidateResult result{name, predict(name, params, shape, bytes), {}};
    if (!result.prediction) result.note = "skipped: the cost model has no formula for it";
    out.candidates.push_back(std::move(result));
  }
  for (const auto& candidate : out.candidates) {
    if (!candidate.prediction) continue;
    const Prediction* p = &*candidate.prediction;
    if (best == nullptr || p->total_s() < best->total_s()) {
      second = best;
      best = p;
    } else if (second == nullptr || p->total_s() < second->total_s()) {
      second = p;
    }
  }
  if (best == nullptr) {
    out.reason = "no candidate has a formula";
    return out;
  }
  out.winner = best->algorithm;
  out.reason = out.winner + " predicted " + microseconds(best->total_s());
  if (second != nullptr) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx",
                  best->total_s() > 0 ? second->total_s() / best->total_s() : 1.0);
    out.reason += ", " + std::string(ratio) + " faster than " + second->algorithm + " (" +
                  microseconds(second->total_s()) + ")";
  }
  out.reason += "; mostly " + dominant_term(*best);
  return out;
}

std::string choose(const CostParams& params, const Shape& shape, std::size_t bytes,
                   const std::vector<std::string>& candidates) {
  return explain(params, shape, bytes, candidates).winner;
}

std::vector<std::string> registered_candidates() {
  std::vector<std::string> names;
  for (const auto& info : allreduce_algorithms()) {
    if (is_available(info)) names.emplace_back(info.name);
  }
  return names;
}

CostParams resolve_params() {
  if (auto name = env_string("COLL_COST_PRESET")) {
    CostParams params = preset_or_throw(*name, "COLL_COST_PRESET");
    params.source += " (COLL_COST_PRESET)";
    return params;
  }
  const std::string path = calibration_path();
  CostParams params = *find_preset("this-vm");
  if (auto calibration = load_calibration(path)) {
    if (calibration->host == this_host()) return calibration->params;
    params.source += " (calibration file " + path + " was measured on host '" + calibration->host +
                     "', this is '" + this_host() + "')";
  } else {
    params.source += " (no calibration file at " + path + ")";
  }
  return params;
}

const CostParams& params_in_use() {
  static const CostParams params = resolve_params();
  return params;
}

std::string choose_for(const std::vector<int>& node_of_rank, std::size_t bytes) {
  // Cached per size for the last job shape: auto is asked once per all-reduce call.
  static std::mutex mutex;
  static std::vector<int> shape_key;
  static std::map<std::size_t, std::string> choices;
  const CostParams& params = params_in_use();
  std::lock_guard lock(mutex);
  if (shape_key != node_of_rank) {
    shape_key = node_of_rank;
    choices.clear();
  }
  if (auto it = choices.find(bytes); it != choices.end()) return it->second;
  std::string winner =
      choose(params, Shape::from_node_of_rank(node_of_rank), bytes, registered_candidates());
  if (winner.empty()) winner = "ring";
  if (choices.size() > 4096) choices.clear();
  return choices.emplace(bytes, winner).first->second;
}

}  // namespace coll::model
