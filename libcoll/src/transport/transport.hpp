// Moves bytes between two ranks: non-blocking tagged send/receive, completion by polling, and
// waiting that neither starves other ranks nor outlives COLL_TIMEOUT.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "transport/peer_memory.hpp"

namespace coll {

class NodeSlots;

using Tag = std::uint64_t;

// What every transport is told, whatever its kind (its own options it reads itself).
struct TransportOptions {
  double timeout_s = 60;       // COLL_TIMEOUT: see Waiter
  int ranks_on_this_host = 1;  // more ranks than cores: yield the core while waiting

  // More ranks on this host than it has cores: a rank waiting may hold the core its peer needs.
  bool ranks_outnumber_cores() const;
};

// Something to wait for besides transport requests: peers' publications in shared memory.
class WaitCondition {
 public:
  virtual ~WaitCondition() = default;
  // How many awaited events are still missing (0: done); fewer than the last time is progress.
  virtual std::size_t missing() = 0;
  // The rank waited on now: named when the wait times out.
  virtual int peer() const = 0;
  // Called now and then once the wait is slow; throws when it finds why it cannot end.
  virtual void check_slow() = 0;
};

class Transport {
 public:
  struct Request {
    void* handle = nullptr;  // backend's in-flight operation; null once complete
    int peer = -1;
    bool is_send = false;
    std::size_t bytes = 0;  // a receive_up_to's capacity until complete, then what arrived
    bool done = false;
    bool up_to = false;  // a shorter message is no error (receive_up_to)
  };

  virtual ~Transport() = default;

  virtual Request send(int peer, Tag tag, const void* data, std::size_t bytes) = 0;
  virtual Request recv(int peer, Tag tag, void* data, std::size_t bytes) = 0;
  // A message of at most `capacity` bytes; once complete, the request's `bytes` is its length.
  virtual Request recv_up_to(int peer, Tag tag, void* data, std::size_t capacity) = 0;

  // Drives communication once; true when it made progress.
  virtual bool progress() = 0;
  // Non-blocking completion check (no progress call). Throws coll::Error if the operation
  // failed (peer unreachable, message size mismatch).
  virtual bool test(Request& request) = 0;

  // Blocks until every request completes (every transport delegates to its Waiter, which owns
  // the timeout, the abort check and the error naming the silent peer).
  virtual void wait_all(std::span<Request> requests) = 0;
  void wait(Request& request) { wait_all(std::span<Request>(&request, 1)); }
  // The same waiting for a condition of shared memory (node slots), under the same timeout.
  virtual void wait_for(WaitCondition& condition) = 0;

  // Direct reads of other ranks' memory, or null when this transport offers none (algorithms
  // that use it then fall back to messages).
  virtual PeerMemory* peer_memory() { return nullptr; }
  // Shared-memory slots among the ranks of each node (node_slots.hpp), or null; a transport
  // that shapes or counts messages offers none, since hand-offs through them bypass it.
  virtual NodeSlots* node_slots() { return nullptr; }
  // Whether a message from `peer` with `tag` has arrived and waits for its receive (which is not
  // consumed). Only needed by transports that offer node slots: an algorithm waiting in them
  // looks for the message of a peer that runs another algorithm.
  virtual bool probe(int peer, Tag tag) {
    (void)peer;
    (void)tag;
    return false;
  }

  // The two hooks of the Waiter (waiter.hpp) beyond progress and test; public so that a
  // decorator (the shaped transport) can forward them to the transport it wraps.
  // Throws (usually through Waiter::peer_lost) when the link to `peer` is known to be broken.
  virtual void check_link(int peer) = 0;
  // Returns when the transport may have something to progress, when `abort_fd` (-1: none)
  // becomes readable, or after max_us microseconds, whichever comes first.
  virtual void sleep_until_event(int abort_fd, int max_us) = 0;
  // True when sleep_until_event returns as soon as a message is delivered (no system call or
  // device to poll): the waiter then sleeps at once, as spinning would only burn a core the
  // sending rank may need.
  virtual bool wakes_on_delivery() const { return false; }

  // Whether this transport emulates the links between nodes itself (the shaped wrapper's NIC per
  // node): the cost model then lets a node's flows share that NIC even where the nodes are
  // emulated on one host (model::CostParams::nic_shared).
  virtual bool emulates_links() const { return false; }

  // Human-readable summary ("ucx: 3 peer(s) over sm,self, 4 over tcp(lo)").
  virtual const char* describe() const = 0;

  // From any thread (a communicator's abort): the wait in progress and every later one fail
  // promptly with `reason`. The first reason stays.
  void interrupt(const std::string& reason);
  bool interrupted() const { return interrupted_.load(std::memory_order_acquire); }
  // Throws InvalidUsage with the reason once interrupted; implementations call it while waiting.
  void check_interrupt() const;

  // Best effort, from the rank that found why the job cannot go on (ranks called different
  // collectives): every rank of the job stops waiting with `reason` within moments, instead of
  // timing out one after another and blaming a healthy neighbour. Returns the job's reason:
  // another rank's, when it found the problem first, so that every rank reports the same one.
  // Where the bootstrap has no channel for it (MPI, a caller's exchange), returns `reason`.
  virtual std::string fail_job(const std::string& reason) { return reason; }

  // A collective failed on this transport: peers may be stopped or gone and messages may be
  // in flight, so the teardown neither waits for peers nor expects requests to complete.
  void mark_failed() { failed_.store(true, std::memory_order_release); }
  bool failed() const { return failed_.load(std::memory_order_acquire) || interrupted(); }

 private:
  std::once_flag interrupt_once_;
  std::string interrupt_reason_;  // written once, before interrupted_ is set
  std::atomic<bool> interrupted_{false};
  std::atomic<bool> failed_{false};
};

}  // namespace coll
