// The ring's schedule as pure functions of (members, me, step), testable without processes.
// Steps [0, n-1) reduce-scatter, steps [n-1, 2(n-1)) all-gather; at every step each member
// sends one block to the member after it and receives one from the member before it.
#pragma once

namespace coll {

class RingSchedule {
 public:
  RingSchedule(int members, int me) : members_(members), me_(me) {}

  int steps() const { return 2 * (members_ - 1); }
  bool reduce_step(int step) const { return step < members_ - 1; }

  // Block this member sends / receives at a step: the reduce-scatter walks backwards from this
  // member, the all-gather forwards the block this member completed (me + 1) and those it
  // receives. The receive of step s is what the member before sent at step s.
  int send_block(int step) const {
    return reduce_step(step) ? wrap(me_ - step) : wrap(me_ + 1 - (step - (members_ - 1)));
  }
  int recv_block(int step) const {
    return reduce_step(step) ? wrap(me_ - step - 1) : wrap(me_ - (step - (members_ - 1)));
  }

 private:
  int wrap(int index) const { return ((index % members_) + members_) % members_; }

  int members_;
  int me_;
};

// The block a member holds complete after the reduce-scatter (and contributes to the
// all-gather): the ring finishes block me + 1 at its last reduce step.
inline int ring_block_of(int member, int members) {
  return (member + 1) % members;
}

}  // namespace coll
