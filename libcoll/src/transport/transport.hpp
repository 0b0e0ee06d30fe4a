// Moves bytes between two ranks: non-blocking tagged send/receive, completion by polling, and
// waiting that neither starves other ranks nor outlives COLL_TIMEOUT.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>

namespace coll {

using Tag = std::uint64_t;

// What every transport is told, whatever its kind (its own options it reads itself).
struct TransportOptions {
  double timeout_s = 60;       // COLL_TIMEOUT: see Waiter
  int ranks_on_this_host = 1;  // more ranks than cores: yield the core while waiting
};

class Transport {
 public:
  struct Request {
    void* handle = nullptr;  // backend's in-flight operation; null once complete
    int peer = -1;
    bool is_send = false;
    std::size_t bytes = 0;
    bool done = false;
  };

  virtual ~Transport() = default;

  virtual Request send(int peer, Tag tag, const void* data, std::size_t bytes) = 0;
  virtual Request recv(int peer, Tag tag, void* data, std::size_t bytes) = 0;

  // Drives communication once; true when it made progress.
  virtual bool progress() = 0;
  // Non-blocking completion check (no progress call). Throws coll::Error if the operation
  // failed (peer unreachable, message size mismatch).
  virtual bool test(Request& request) = 0;

  // Blocks until every request completes (every transport delegates to its Waiter, which owns
  // the timeout, the abort check and the error naming the silent peer).
  virtual void wait_all(std::span<Request> requests) = 0;
  void wait(Request& request) { wait_all(std::span<Request>(&request, 1)); }

  // The two hooks of the Waiter (waiter.hpp) beyond progress and test; public so that a
  // decorator (the shaped transport) can forward them to the transport it wraps.
  // Throws (usually through Waiter::peer_lost) when the link to `peer` is known to be broken.
  virtual void check_link(int peer) = 0;
  // Returns when the transport may have something to progress, when `abort_fd` (-1: none)
  // becomes readable, or after max_us microseconds, whichever comes first.
  virtual void sleep_until_event(int abort_fd, int max_us) = 0;

  // Human-readable summary ("ucx: 3 peer(s) over sm,self, 4 over tcp(lo)").
  virtual const char* describe() const = 0;

  // From any thread (a communicator's abort): the wait in progress and every later one fail
  // promptly with `reason`. The first reason stays.
  void interrupt(const std::string& reason);
  bool interrupted() const { return interrupted_.load(std::memory_order_acquire); }
  // Throws InvalidUsage with the reason once interrupted; implementations call it while waiting.
  void check_interrupt() const;

 private:
  std::once_flag interrupt_once_;
  std::string interrupt_reason_;  // written once, before interrupted_ is set
  std::atomic<bool> interrupted_{false};
};

}  // namespace coll
