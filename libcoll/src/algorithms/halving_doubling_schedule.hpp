// Rabenseifner's pairs as pure functions of the group size, testable without processes.
// The largest power of two p <= n members form the core; with r = n - p, the first 2r members
// fold first: each even one hands its whole vector to its odd neighbour and sits out until it
// gets the result back. Core ranks pair at distance p/2, p/4, ..., 1 in the reduce-scatter and
// in the reverse order in the all-gather.
#pragma once

#include <utility>
#include <vector>

namespace coll {

using MemberPairs = std::vector<std::pair<int, int>>;  // (from member, to member)

class HalvingDoublingSchedule {
 public:
  explicit HalvingDoublingSchedule(int members) {
    while (2 * power_ <= members) power_ *= 2;
    while ((1 << steps_) < power_) ++steps_;
    extra_ = members - power_;
  }

  int power() const { return power_; }  // core size
  int steps() const { return steps_; }  // log2(power): pairing steps per phase
  int extra() const { return extra_; }  // members past the power of two

  bool folds(int member) const { return member < 2 * extra_; }  // pairs up before the core
  bool sits_out(int member) const { return folds(member) && member % 2 == 0; }
  int fold_partner(int member) const { return member ^ 1; }

  // A core member's rank among the power of two, and back.
  int core_rank(int member) const { return folds(member) ? member / 2 : member - extra_; }
  int member_of(int core_rank) const {
    return core_rank < extra_ ? 2 * core_rank + 1 : core_rank + extra_;
  }
  // Distance between the pair of reduce-scatter step `step` (largest first).
  int distance(int step) const { return power_ >> (step + 1); }
  // The member a core rank exchanges with at `step` (the all-gather mirrors the same pairs).
  int partner(int core_rank, int step) const { return member_of(core_rank ^ distance(step)); }

  // Who sends to whom, for the cost formulas: the fold (sitting-out members to their partners),
  // the hand-back of the result, and one step's pairs of core members (both directions).
  MemberPairs fold_in() const { return fold(false); }
  MemberPairs hand_back() const { return fold(true); }
  MemberPairs step_pairs(int step) const {
    MemberPairs pairs;
    for (int v = 0; v < power_; ++v) pairs.emplace_back(member_of(v), partner(v, step));
    return pairs;
  }

 private:
  MemberPairs fold(bool back) const {
    MemberPairs pairs;
    for (int member = 0; member < 2 * extra_; member += 2) {
      back ? pairs.emplace_back(fold_partner(member), member)
           : pairs.emplace_back(member, fold_partner(member));
    }
    return pairs;
  }

  int power_ = 1;
  int steps_ = 0;
  int extra_ = 0;
};

}  // namespace coll
