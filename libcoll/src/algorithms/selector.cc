#include "coll/selector.hpp"

#include <algorithm>
#include <cstdio>

#include "algorithms/registry.hpp"

namespace coll {
namespace {

std::string microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f us", seconds * 1e6);
  return text;
}

std::string dominant_term(const model::Prediction& p) {
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

std::optional<model::Prediction> predict(std::string_view algorithm,
                                         const model::CostParams& params, const model::Shape& shape,
                                         std::size_t bytes, const Tuning& tuning) {
  const AlgorithmInfo* info = find_algorithm(algorithm);
  if (info == nullptr || info->cost == nullptr) return std::nullopt;
  auto prediction = info->cost(params, shape, static_cast<double>(bytes), tuning);
  if (prediction) prediction->algorithm = std::string(algorithm);
  return prediction;
}

std::vector<std::string> modeled_algorithms() {
  std::vector<std::string> names;
  for (const auto& info : allreduce_algorithms()) {
    if (info.cost != nullptr) names.emplace_back(info.name);
  }
  return names;
}

std::vector<std::string> registered_candidates() {
  std::vector<std::string> names;
  for (const auto& info : allreduce_algorithms()) {
    if (is_available(info)) names.emplace_back(info.name);
  }
  return names;
}

const model::Prediction* Explanation::winning() const {
  for (const auto& candidate : candidates) {
    if (candidate.name == winner && candidate.prediction) return &*candidate.prediction;
  }
  return nullptr;
}

Explanation explain(const model::CostParams& params, const model::Shape& shape, std::size_t bytes,
                    const std::vector<std::string>& candidates, const Tuning& tuning) {
  Explanation out;
  out.bytes = bytes;
  const model::Prediction* best = nullptr;
  const model::Prediction* second = nullptr;
  for (const auto& name : candidates) {
    CandidateResult result{name, predict(name, params, shape, bytes, tuning), {}};
    if (!result.prediction) result.note = "skipped: the cost model has no formula for it";
    const AlgorithmInfo* info = find_algorithm(name);
    if (result.prediction && info != nullptr && !info->carries_call_check) {
      add_check_round(params, shape, tuning, *result.prediction);
    }
    out.candidates.push_back(std::move(result));
  }
  for (const auto& candidate : out.candidates) {
    if (!candidate.prediction) continue;
    const model::Prediction* p = &*candidate.prediction;
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

std::string choose(const model::CostParams& params, const model::Shape& shape, std::size_t bytes,
                   const std::vector<std::string>& candidates, const Tuning& tuning) {
  return explain(params, shape, bytes, candidates, tuning).winner;
}

Selector::Selector(model::CostParams params, const std::vector<int>& node_of_rank, Tuning tuning,
                   std::optional<model::DecisionTable> decisions, std::string decisions_source,
                   double ranks_per_core)
    : params_(model::sharing_cores(params, ranks_per_core)),
      shape_(model::Shape::from_node_of_rank(node_of_rank)),
      tuning_(std::move(tuning)),
      decisions_(std::move(decisions)),
      decisions_source_(std::move(decisions_source)),
      candidates_(registered_candidates()) {}

model::CostParams Selector::params_for(bool buffers_mapped, bool in_place) const {
  model::CostParams params = params_;
  params.call.peer_buffers_mapped = buffers_mapped;
  params.call.in_place = in_place;
  return params;
}

std::optional<model::Prediction> Selector::predict(std::string_view algorithm, std::size_t bytes,
                                                   bool buffers_mapped, bool in_place) const {
  return coll::predict(algorithm, params_for(buffers_mapped, in_place), shape_, bytes, tuning_);
}

Explanation Selector::explain(std::size_t bytes, bool buffers_mapped, bool in_place) const {
  Explanation out =
      coll::explain(params_for(buffers_mapped, in_place), shape_, bytes, candidates_, tuning_);
  const model::DecisionRule* rule =
      decisions_ ? decisions_->find(shape_, bytes, buffers_mapped, in_place) : nullptr;
  if (rule == nullptr) return out;
  const bool runnable =
      std::find(candidates_.begin(), candidates_.end(), rule->algorithm) != candidates_.end();
  const std::string where = "tuning file " + decisions_source_ + " (" +
                            decisions_->key_for(shape_, buffers_mapped, in_place) + " from " +
                            std::to_string(rule->from_bytes) + " B)";
  if (!runnable) {
    out.reason += "; " + where + " names " + rule->algorithm + ", not available here";
    return out;
  }
  const std::string model_winner = out.winner;
  out.winner = rule->algorithm;
  out.reason = rule->algorithm + " measured fastest, " + where + "; the model would pick " +
               (model_winner.empty() ? std::string("none") : model_winner);
  return out;
}

Selector::Choice Selector::choose_for_buffers(std::size_t bytes) const {
  std::lock_guard lock(mutex_);
  if (auto it = choices_.find(bytes); it != choices_.end()) return it->second;
  auto winner = [&](bool mapped, bool in_place) {
    std::string name = explain(bytes, mapped, in_place).winner;
    return name.empty() ? std::string("ring") : name;
  };
  if (choices_.size() > 4096) choices_.clear();  // bounded: sizes vary in model replays
  Choice choice{winner(false, false), winner(true, false), winner(false, true), winner(true, true)};
  return choices_.emplace(bytes, std::move(choice)).first->second;
}

std::string Selector::choose(std::size_t bytes, bool buffers_mapped, bool in_place) const {
  return choose_for_buffers(bytes).of(buffers_mapped, in_place);
}

}  // namespace coll
