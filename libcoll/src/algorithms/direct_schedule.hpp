// Direct all-reduce's messages as pure functions of the group size, testable without processes:
// every member sends its data to every other in n - 1 shifts (shift k: member i to i + k), the
// next member first, so that the first message can carry the argument check (CallCheck); every
// member receives from i - k in the same order and reduces the n contributions in member order.
#pragma once

namespace coll {

class DirectSchedule {
 public:
  explicit DirectSchedule(int members) : members_(members) {}

  int shifts() const { return members_ - 1; }
  // Whom `member` sends to, and receives from, in shift `shift` (0-based: shift 0 is the next
  // and the previous member).
  int destination(int member, int shift) const { return (member + shift + 1) % members_; }
  int source(int member, int shift) const {
    return ((member - shift - 1) % members_ + members_) % members_;
  }

 private:
  int members_;
};

}  // namespace coll
