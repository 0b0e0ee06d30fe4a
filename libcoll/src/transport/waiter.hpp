// How every transport waits for its requests: progress, spin briefly, then sleep until the
// transport has news; fail when the job is aborted, and when COLL_TIMEOUT passes without any of
// the awaited requests completing, with an error naming the peer waited on. A transport owns one
// Waiter, which calls its two hooks (Transport::check_link, Transport::sleep_until_event).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "transport/transport.hpp"

namespace coll {

class Bootstrap;

// A wait that has made no progress for kReportWaitSeconds (or half of COLL_TIMEOUT, if less) is
// published to the bootstrap (Bootstrap::publish_wait), and withdrawn when it completes, so that
// a timeout can be traced to the rank that stalled rather than blamed on the one waited for.
class Waiter {
 public:
  // `bootstrap` (may be null) is where the job's abort message arrives.
  Waiter(Transport& transport, Bootstrap* bootstrap, const TransportOptions& options);

  void wait_all(std::span<Transport::Request> requests);
  // The same for a condition no transport event signals: polls it (yielding the core when ranks
  // outnumber cores), then sleeps in slices that grow while nothing changes.
  void wait_for(WaitCondition& condition);

  // Throws RemoteError "job aborted: <reason>" once another rank has failed the job.
  void check_abort();
  // A broken link is often a consequence: the peer quit because a third rank died. Gives the
  // abort message naming the root cause a moment to arrive, then throws.
  [[noreturn]] void peer_lost(int peer, const std::string& cause);
  // Transport::fail_job through the bootstrap.
  std::string fail_job(const std::string& reason);
  // A message whose size differs from the receive posted for it: the ranks called the
  // collective with different arguments. Fails the job (fail_job) and throws InvalidUsage.
  [[noreturn]] void size_mismatch(int peer, std::size_t expected_bytes);
  // A receive completed with `received` bytes: another length than an exact receive's is a
  // size_mismatch; a receive_up_to's request keeps the length in `bytes`.
  void complete_receive(Transport::Request& request, std::size_t received);

 private:
  void wait_until_complete(std::span<Transport::Request> requests);
  void wait_until_ready(WaitCondition& condition);
  // For requests: `others` are further peers still waited for, named too (in a partition the
  // first one may be a healthy rank that itself waits across the cut).
  [[noreturn]] void timed_out(const Transport::Request& stuck, const std::vector<int>& others);
  // For a condition of shared memory.
  [[noreturn]] void timed_out(int peer, bool sending);
  std::string timeout_reason(int peer, bool sending, const std::vector<int>& others) const;
  // Tells the bootstrap what this rank has waited on for long (see kReportWaitSeconds).
  void report_wait(double waiting_since, int peer, bool sending, std::string& published);
  // Waits up to max_ms for the job's abort message; returns it if it came.
  std::optional<std::string> await_abort(int max_ms);

  Transport& transport_;
  Bootstrap* bootstrap_;
  TransportOptions options_;
  double timeout_s_;
  double report_wait_after_s_;
  bool oversubscribed_;
};

// "rank <peer> sent a message of a different size than the <expected> bytes rank <me> expected:
// ..." (me < 0: "this rank").
std::string size_mismatch_reason(int peer, int me, std::size_t expected_bytes);

}  // namespace coll
