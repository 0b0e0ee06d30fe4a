#include "transport/waiter.hpp"

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bootstrap/bootstrap.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

// How long to keep polling without progress before sleeping: long enough to catch a reply that
// is microseconds away; when ranks outnumber cores, only a few yielding polls, so that the rank
// that has work gets the core.
constexpr double kIdleSpinSeconds = 1e-3;
constexpr int kOversubscribedSpins = 16;
constexpr int kMaxSleepUs = 2000;

std::string seconds_text(double seconds) {  // "60", "0.2"
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

Waiter::Waiter(Transport& transport, Bootstrap* bootstrap, const TransportOptions& options)
    : transport_(transport),
      bootstrap_(bootstrap),
      timeout_s_(options.timeout_s),
      oversubscribed_(options.ranks_on_this_host > std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN))) {}

void Waiter::check_abort() {
  transport_.check_interrupt();  // this rank's communicator was aborted (Comm::abort)
  if (bootstrap_ == nullptr) return;
  if (auto reason = bootstrap_->abort_reason()) {
    throw Error(Status::RemoteError, "job aborted: " + *reason);
  }
}

void Waiter::peer_lost(int peer, const std::string& cause) {
  if (bootstrap_ != nullptr && bootstrap_->abort_fd() >= 0) {
    pollfd fd{bootstrap_->abort_fd(), POLLIN, 0};
    for (int waited_ms = 0; waited_ms < 1000 && !bootstrap_->abort_reason(); waited_ms += 50) {
      ::poll(&fd, 1, 50);
    }
  }
  check_abort();
  throw Error(Status::RemoteError, "lost the connection to rank " + std::to_string(peer) + " (" +
                                       cause + "): it probably died");
}

void Waiter::wait_all(std::span<Transport::Request> requests) {
  Deadline deadline(timeout_s_);
  int idle = 0;
  double idle_since = 0;
  std::size_t first_pending = 0;
  std::size_t completed_before = 0;
  while (true) {
    transport_.progress();
    while (first_pending < requests.size() && transport_.test(requests[first_pending])) {
      ++first_pending;
    }
    std::size_t completed = first_pending;
    for (std::size_t i = first_pending; i < requests.size(); ++i) {
      completed += transport_.test(requests[i]);
    }
    if (completed == requests.size()) return;
    transport_.check_interrupt();
    // Only the awaited requests completing counts as progress: a transport may report activity
    // (keepalives, wire-up) even when the peer waited for is gone, which must not hold the
    // timeout off.
    if (completed != completed_before) {
      completed_before = completed;
      deadline.extend();
      idle = 0;
      continue;
    }
    if (deadline.expired()) {
      const Transport::Request& stuck = requests[first_pending];
      check_abort();
      transport_.check_link(stuck.peer);
      throw Error(Status::Timeout,
                  std::string("no progress ") + (stuck.is_send ? "sending to" : "receiving from") +
                      " rank " + std::to_string(stuck.peer) + " within " +
                      seconds_text(timeout_s_) + " s (COLL_TIMEOUT): rank " +
                      std::to_string(stuck.peer) + " is dead, stuck, or in a different collective");
    }
    if (idle++ == 0) idle_since = now_seconds();
    if (oversubscribed_ ? idle < kOversubscribedSpins
                        : now_seconds() - idle_since < kIdleSpinSeconds) {
      if (oversubscribed_) sched_yield();
      continue;
    }
    idle = 0;
    check_abort();
    for (std::size_t i = first_pending; i < requests.size(); ++i) {
      if (!requests[i].done) transport_.check_link(requests[i].peer);
    }
    const double remaining_us = std::max(0.0, deadline.remaining() * 1e6);
    transport_.sleep_until_event(
        bootstrap_ ? bootstrap_->abort_fd() : -1,
        static_cast<int>(std::min<double>(kMaxSleepUs, std::ceil(remaining_us))));
  }
}

void throw_size_mismatch(int peer, std::size_t expected_bytes) {
  throw Error(Status::InvalidUsage,
              "rank " + std::to_string(peer) + " sent a message of a different size than " +
                  std::to_string(expected_bytes) +
                  " bytes: the ranks called the collective with different arguments");
}

}  // namespace coll
