// Monotonic time in seconds, and a deadline that can be pushed back when progress is made.
#pragma once

#include <chrono>

namespace coll {

inline double now_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

class Deadline {
 public:
  explicit Deadline(double timeout_s)
      : timeout_s_(timeout_s), expires_(now_seconds() + timeout_s) {}
  void extend() { expires_ = now_seconds() + timeout_s_; }
  bool expired() const { return now_seconds() >= expires_; }
  double remaining() const { return expires_ - now_seconds(); }
  double timeout() const { return timeout_s_; }

 private:
  double timeout_s_;
  double expires_;
};

}  // namespace coll
