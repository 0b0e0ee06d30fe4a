// How every transport waits for its requests: progress, spin briefly, then sleep until the
// transport has news; fail when the job is aborted, and when COLL_TIMEOUT passes without any of
// the awaited requests completing, with an error naming the peer waited on. A transport owns one
// Waiter, which calls its two hooks (Transport::check_link, Transport::sleep_until_event).
#pragma once

#include <span>
#include <string>

#include "transport/transport.hpp"

namespace coll {

class Bootstrap;

class Waiter {
 public:
  // `bootstrap` (may be null) is where the job's abort message arrives.
  Waiter(Transport& transport, Bootstrap* bootstrap, const TransportOptions& options);

  void wait_all(std::span<Transport::Request> requests);

  // Throws RemoteError "job aborted: <reason>" once another rank has failed the job.
  void check_abort();
  // A broken link is often a consequence: the peer quit because a third rank died. Gives the
  // abort message naming the root cause a moment to arrive, then throws.
  [[noreturn]] void peer_lost(int peer, const std::string& cause);

 private:
  Transport& transport_;
  Bootstrap* bootstrap_;
  double timeout_s_;
  bool oversubscribed_;
};

// The error for a message whose size differs from the receive posted for it.
[[noreturn]] void throw_size_mismatch(int peer, std::size_t expected_bytes);

}  // namespace coll
