// Choosing the all-reduce algorithm (`auto`): a measured decision table's rule for the job's shape
// and size when there is one (collbench --tune, coll/model/decision_table.hpp), else predict every
// registered algorithm with its own cost formula (AlgorithmInfo::cost), take the fastest, say
// why. A communicator owns one Selector, with its cost parameters, node map, tuning and table,
// and caches its choices per size.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/model/decision_table.hpp"
#include "coll/model/link_params.hpp"
#include "coll/model/prediction.hpp"
#include "coll/model/shape.hpp"
#include "coll/tuning.hpp"

namespace coll {

// The registered algorithm's formula under `tuning`; nullopt when the name is unknown or the
// algorithm has no formula (under this tuning).
std::optional<model::Prediction> predict(std::string_view algorithm,
                                         const model::CostParams& params, const model::Shape& shape,
                                         std::size_t bytes, const Tuning& tuning = {});

// The registered algorithms with a cost formula, in registry order (available or not).
std::vector<std::string> modeled_algorithms();
// The registered algorithms this process can run, in registry order: what `auto` considers.
std::vector<std::string> registered_candidates();

struct CandidateResult {
  std::string name;
  std::optional<model::Prediction> prediction;  // nullopt: no formula, skipped
  std::string note;                             // why it was skipped, when it was
};

struct Explanation {
  std::size_t bytes = 0;
  std::vector<CandidateResult> candidates;   // in the order given
  std::string winner;                        // empty when no candidate has a formula
  std::string reason;                        // one line
  const model::Prediction* winning() const;  // the winner's prediction, or nullptr
};

// Predicts every candidate; the fastest wins, ties going to the earlier candidate.
Explanation explain(const model::CostParams& params, const model::Shape& shape, std::size_t bytes,
                    const std::vector<std::string>& candidates, const Tuning& tuning = {});
std::string choose(const model::CostParams& params, const model::Shape& shape, std::size_t bytes,
                   const std::vector<std::string>& candidates, const Tuning& tuning = {});

class Selector {
 public:
  // `decisions`: a measured table (its rules for this shape come first; `decisions_source` names
  // it in explanations). `ranks_per_core` > 1: the ranks share cores (model::sharing_cores).
  Selector(model::CostParams params, const std::vector<int>& node_of_rank, Tuning tuning,
           std::optional<model::DecisionTable> decisions = std::nullopt,
           std::string decisions_source = {}, double ranks_per_core = 1);

  const model::CostParams& params() const { return params_; }
  const model::Shape& shape() const { return shape_; }
  const Tuning& tuning() const { return tuning_; }

  // `buffers_mapped`: the call's buffers come from allocate_shared
  // (CostParams::peer_buffers_mapped); `in_place`: its input is its output (CostParams::in_place).
  std::optional<model::Prediction> predict(std::string_view algorithm, std::size_t bytes,
                                           bool buffers_mapped = false,
                                           bool in_place = false) const;
  // Every registered candidate of this process, explained; the winner is the decision table's
  // when a rule covers this size (for shared buffers, `buffers_mapped`: from allocate_shared,
  // its shared rules; in place, its in-place rules, or where it has none the others) and names
  // a candidate of this process.
  Explanation explain(std::size_t bytes, bool buffers_mapped = false, bool in_place = false) const;
  // The library's `auto`: the table's or the model's winner (ring when there is neither), for
  // buffers the peers read by system calls (`plain`) and for buffers they map (`mapped`), out of
  // place and in place; usually one name, so a caller looks its buffers up only where they
  // differ. Cached per size; safe to call from several threads.
  struct Choice {
    std::string plain, mapped, plain_in_place, mapped_in_place;
    const std::string& of(bool buffers_mapped, bool in_place) const {
      if (in_place) return buffers_mapped ? mapped_in_place : plain_in_place;
      return buffers_mapped ? mapped : plain;
    }
  };
  Choice choose_for_buffers(std::size_t bytes) const;
  std::string choose(std::size_t bytes, bool buffers_mapped = false, bool in_place = false) const;
  // params() for a call with such buffers (the model's view of it, the table aside).
  model::CostParams params_for(bool buffers_mapped, bool in_place) const;

 private:
  model::CostParams params_;
  model::Shape shape_;
  Tuning tuning_;
  std::optional<model::DecisionTable> decisions_;
  std::string decisions_source_;
  std::vector<std::string> candidates_;
  mutable std::mutex mutex_;
  mutable std::map<std::size_t, Choice> choices_;
};

}  // namespace coll
