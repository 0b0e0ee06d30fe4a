#include "transport/waiter.hpp"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/wait_record.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

// How long to keep polling without progress before sleeping. A sleeping rank is woken by its
// event fd or, at the latest, after kMaxSleepUs; polling must outlast that many times over, or
// two ranks that once fell asleep (a peer descheduled for a moment on a busy machine) keep
// waking each other by timer and every small collective costs milliseconds. Once a wait has
// slept, it only polls briefly (kPollsPerClockRead) between sleeps until the next progress: a
// peer that is still computing would otherwise keep this rank spinning ~90 % of the time, on
// a core the process's own compute threads need (a DDP step: backward beside the all-reduce).
// When ranks outnumber cores, only a few yielding polls: the rank that has work needs the core
// more.
constexpr double kIdleSpinSeconds = 20e-3;
constexpr unsigned kOversubscribedPolls = 16;
constexpr int kMaxSleepUs = 2000;
// A condition's sleep: nothing wakes it when a peer publishes, so it sleeps in slices, short at
// first and doubling while nothing changes (a peer still computing), so that a long wait costs
// little of a core; a publication is then seen at most kMaxConditionSleepUs late, after a wait
// of at least kIdleSpinSeconds.
constexpr int kConditionSleepUs = 50;
constexpr int kMaxConditionSleepUs = 1000;
constexpr double kReportWaitSeconds = 1;
constexpr int kPreferCheckMs = 500;
// How long a rank that timed out listens for the reason of the peer it waited for.
constexpr double kAnnounceGraceSeconds = 1;
// Polls between clock reads while idle: a clock read can cost more than a poll, and every poll
// skipped delays seeing the message (docs/tuning.md, "Constants measured on the build VM").
constexpr unsigned kPollsPerClockRead = 32;

std::string seconds_text(double seconds) {  // "60", "0.2"
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

Waiter::Waiter(Transport& transport, Bootstrap* bootstrap, const TransportOptions& options)
    : transport_(transport),
      bootstrap_(bootstrap),
      options_(options),
      timeout_s_(options.timeout_s),
      report_wait_after_s_(std::min(kReportWaitSeconds, options.timeout_s / 2)),
      oversubscribed_(options.ranks_outnumber_cores()) {}

void Waiter::check_abort() {
  transport_.check_interrupt();  // this rank's communicator was aborted (Comm::abort)
  if (bootstrap_ == nullptr) return;
  if (auto reason = bootstrap_->abort_reason()) {
    throw Error(Status::RemoteError, "job aborted: " + *reason);
  }
}

std::optional<std::string> Waiter::await_abort(int max_ms) {
  if (bootstrap_ == nullptr || bootstrap_->abort_fd() < 0) return std::nullopt;
  pollfd fd{bootstrap_->abort_fd(), POLLIN, 0};
  for (int waited_ms = 0; waited_ms < max_ms && !bootstrap_->abort_reason(); waited_ms += 10) {
    ::poll(&fd, 1, 10);
  }
  return bootstrap_->abort_reason();
}

void Waiter::peer_lost(int peer, const std::string& cause) {
  await_abort(1000);
  check_abort();
  throw Error(Status::RemoteError, "lost the connection to " + options_.rank_name(peer) + " (" +
                                       cause + "): it probably died");
}

std::string Waiter::fail_job(const std::string& reason) {
  if (bootstrap_ == nullptr) return reason;
  bootstrap_->fail_job(reason);
  // The store echoes the job's first reason to every rank, this one included.
  return await_abort(500).value_or(reason);
}

void Waiter::wait_all(std::span<Transport::Request> requests) {
  // Sends that completed when posted (short messages) need no trip through the transport.
  if (std::all_of(requests.begin(), requests.end(),
                  [](const Transport::Request& request) { return request.done; })) {
    return;
  }
  try {
    wait_until_complete(requests);
  } catch (const Error& error) {
    transport_.mark_failed(error.what());
    throw;
  }
}

void Waiter::wait_until_complete(std::span<Transport::Request> requests) {
  // Started at the first idle poll that reads the clock, dropped when a request completes: the
  // COLL_TIMEOUT clock restarts then, and a wait that completes while polling reads no clock.
  std::optional<Deadline> deadline;
  double waiting_since = 0;  // when the deadline started: the last progress seen
  unsigned idle = 0;
  double idle_since = 0;
  std::string published;  // the wait record this wait published, if any
  std::size_t first_pending = 0;
  std::size_t completed_before = 0;
  bool slept = false;  // since the last progress: spin no more before the next sleep
  const bool spin = !transport_.wakes_on_delivery();
  while (true) {
    transport_.progress();
    while (first_pending < requests.size() && transport_.test(requests[first_pending])) {
      ++first_pending;
    }
    std::size_t completed = first_pending;
    for (std::size_t i = first_pending; i < requests.size(); ++i) {
      completed += transport_.test(requests[i]);
    }
    if (completed == requests.size()) {
      if (!published.empty()) bootstrap_->publish_wait("");
      return;
    }
    transport_.check_interrupt();
    // Only the awaited requests completing counts as progress: a transport may report activity
    // (keepalives, wire-up) even when the peer waited for is gone, which must not hold the
    // timeout off.
    if (completed != completed_before) {
      completed_before = completed;
      deadline.reset();
      idle = 0;
      slept = false;
      continue;
    }
    ++idle;
    if (spin && (oversubscribed_ ? idle < kOversubscribedPolls : idle % kPollsPerClockRead != 0)) {
      if (oversubscribed_) sched_yield();
      continue;
    }
    if (!deadline) {
      deadline.emplace(timeout_s_);
      waiting_since = now_seconds();
    }
    if (deadline->expired()) {
      const Transport::Request& stuck = requests[first_pending];
      check_abort();
      transport_.check_link(stuck.peer);
      std::vector<int> others;
      for (std::size_t i = first_pending; i < requests.size(); ++i) {
        const int peer = requests[i].peer;
        if (!requests[i].done && peer != stuck.peer &&
            std::find(others.begin(), others.end(), peer) == others.end()) {
          others.push_back(peer);
        }
      }
      timed_out(stuck, others);
    }
    if (spin && !oversubscribed_ && !slept) {
      if (idle == kPollsPerClockRead) idle_since = now_seconds();
      if (now_seconds() - idle_since < kIdleSpinSeconds) continue;
    }
    idle = 0;
    slept = true;
    check_abort();
    report_wait(waiting_since, requests[first_pending].peer, requests[first_pending].is_send,
                published);
    for (std::size_t i = first_pending; i < requests.size(); ++i) {
      if (!requests[i].done) transport_.check_link(requests[i].peer);
    }
    const double remaining_us = std::max(0.0, deadline->remaining() * 1e6);
    transport_.sleep_until_event(
        bootstrap_ ? bootstrap_->abort_fd() : -1,
        static_cast<int>(std::min<double>(kMaxSleepUs, std::ceil(remaining_us))));
  }
}

std::string Waiter::timeout_reason(int peer, bool sending, const std::vector<int>& others) const {
  std::string also;
  for (const int other : others) {
    also += (also.empty() ? "; also waiting for " : ", ") + options_.rank_name(other);
  }
  return std::string("no progress ") + (sending ? "sending to " : "receiving from ") +
         options_.rank_name(peer) + " within " + seconds_text(timeout_s_) +
         " s (COLL_TIMEOUT): rank " + std::to_string(peer) +
         " is dead, stuck, or in a different collective" + also;
}

void Waiter::timed_out(const Transport::Request& stuck, const std::vector<int>& others) {
  const std::string reason = timeout_reason(stuck.peer, stuck.is_send, others);
  // The peer waited for may itself wait on a rank across a cut, and time out at about the same
  // moment: every linked peer hears why this rank gives up, and the peer waited for gets a
  // moment to say why it does, so that the error names the cut rather than a healthy rank.
  if (transport_.announce_failure(reason)) {
    const Deadline grace(kAnnounceGraceSeconds);
    while (!grace.expired()) {
      transport_.progress();
      check_abort();
      transport_.check_link(stuck.peer);
      transport_.sleep_until_event(bootstrap_ ? bootstrap_->abort_fd() : -1, kMaxSleepUs);
    }
  }
  throw Error(Status::Timeout, reason);
}

void Waiter::timed_out(int peer, bool sending) {
  throw Error(Status::Timeout, timeout_reason(peer, sending, {}));
}

void Waiter::report_wait(double waiting_since, int peer, bool sending, std::string& published) {
  if (bootstrap_ == nullptr || now_seconds() - waiting_since <= report_wait_after_s_) return;
  const std::string record = wait_record(peer, sending);
  if (record != published) bootstrap_->publish_wait(published = record);
}

void Waiter::wait_for(WaitCondition& condition) {
  if (condition.missing() == 0) return;
  try {
    wait_until_ready(condition);
  } catch (const Error& error) {
    transport_.mark_failed(error.what());
    throw;
  }
}

void Waiter::wait_until_ready(WaitCondition& condition) {
  std::optional<Deadline> deadline;
  double waiting_since = 0;
  std::string published;
  std::size_t missing_before = condition.missing();
  int sleep_us = kConditionSleepUs;
  for (unsigned idle = 1;; ++idle) {
    const std::size_t missing = condition.missing();
    if (missing == 0) {
      if (!published.empty()) bootstrap_->publish_wait("");
      return;
    }
    if (missing != missing_before) {  // a peer arrived: the COLL_TIMEOUT clock restarts
      missing_before = missing;
      deadline.reset();
      sleep_us = kConditionSleepUs;
    }
    if (oversubscribed_) sched_yield();
    if (idle % kPollsPerClockRead != 0) continue;
    transport_.check_interrupt();
    if (!deadline) {
      deadline.emplace(timeout_s_);
      waiting_since = now_seconds();
    }
    if (deadline->expired()) {
      check_abort();
      timed_out(condition.peer(), false);
    }
    if (now_seconds() - waiting_since < kIdleSpinSeconds) continue;
    check_abort();
    condition.check_slow();
    report_wait(waiting_since, condition.peer(), false, published);
    const int abort_fd = bootstrap_ ? bootstrap_->abort_fd() : -1;
    pollfd fd{abort_fd, POLLIN, 0};
    const timespec slice{0, sleep_us * 1000L};
    ::ppoll(&fd, abort_fd >= 0 ? 1 : 0, &slice, nullptr);
    sleep_us = std::min(2 * sleep_us, kMaxConditionSleepUs);
  }
}

std::string size_mismatch_reason(int peer, int me, std::size_t expected_bytes) {
  return "rank " + std::to_string(peer) + " sent a message of a different size than the " +
         std::to_string(expected_bytes) + " bytes " +
         (me >= 0 ? "rank " + std::to_string(me) : std::string("this rank")) +
         " expected: the ranks called the collective with different arguments";
}

void Waiter::size_mismatch(int peer, std::size_t expected_bytes) {
  // The argument check of the sender's neighbour usually sees the same mismatch, and its message
  // names both calls: a moment for it to arrive before posting this vaguer one.
  if (auto reason = await_abort(kPreferCheckMs)) throw Error(Status::InvalidUsage, *reason);
  throw Error(
      Status::InvalidUsage,
      fail_job(size_mismatch_reason(peer, bootstrap_ ? bootstrap_->rank() : -1, expected_bytes)));
}

void Waiter::complete_receive(Transport::Request& request, std::size_t received) {
  if (request.up_to ? received > request.bytes : received != request.bytes) {
    size_mismatch(request.peer, request.bytes);
  }
  request.bytes = received;
}

}  // namespace coll
