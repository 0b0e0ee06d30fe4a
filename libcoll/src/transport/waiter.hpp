// How every transport waits for its requests: progress, spin briefly, then sleep until the
// transport has news; fail when the job is aborted, and when COLL_TIMEOUT passes without any of
// the awaited requests completing, with an error naming the peer waited on. A transport gives
// the waiter two hooks (check a peer's link, sleep until an event) and owns one Waiter.
#pragma once

#include <span>
#include <string>

#include "transport/transport.hpp"

namespace coll {

class Bootstrap;

class Waiter {
 public:
  // What the waiter needs from a transport beyond Transport::progress and Transport::test.
  class Hooks {
   public:
    virtual ~Hooks() = default;
    // Throws (usually through Waiter::peer_lost) when the link to `peer` is known to be broken.
    virtual void check_link(int peer) = 0;
    // Returns when the transport may have something to progress, when `abort_fd` (-1: none)
    // becomes readable, or after max_ms, whichever comes first.
    virtual void sleep_until_event(int abort_fd, int max_ms) = 0;
  };

  // `bootstrap` (may be null) is where the job's abort message arrives.
  Waiter(Transport& transport, Hooks& hooks, Bootstrap* bootstrap, const TransportOptions& options);

  void wait_all(std::span<Transport::Request> requests);

  // Throws RemoteError "job aborted: <reason>" once another rank has failed the job.
  void check_abort();
  // A broken link is often a consequence: the peer quit because a third rank died. Gives the
  // abort message naming the root cause a moment to arrive, then throws.
  [[noreturn]] void peer_lost(int peer, const std::string& cause);

 private:
  Transport& transport_;
  Hooks& hooks_;
  Bootstrap* bootstrap_;
  double timeout_s_;
  bool oversubscribed_;
};

// The error for a message whose size differs from the receive posted for it.
[[noreturn]] void throw_size_mismatch(int peer, std::size_t expected_bytes);
// A receive completed with `received` bytes: another length than an exact receive's is that
// error; a receive_up_to's request keeps the length in `bytes`.
void complete_receive(Transport::Request& request, std::size_t received);

}  // namespace coll
