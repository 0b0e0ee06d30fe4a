// Moves bytes between two ranks: non-blocking tagged send/receive, completion by polling, and
// waiting (through the Waiter every transport has) that neither starves other ranks nor outlives
// COLL_TIMEOUT. What the ranks of a node share besides messages (reads of each other's memory,
// slots in shared memory) is not a transport's business: see node_resources.hpp.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace coll {

class Bootstrap;
class Waiter;

using Tag = std::uint64_t;

// Which of a rank's peers a transport links it to: a routing transport gives the links of each
// class (inside the node, across the network) to a transport of its own.
enum class Links { all, node, network };

// What every transport is told, whatever its kind (its own options it reads itself).
struct TransportOptions {
  double timeout_s = 60;       // COLL_TIMEOUT: see Waiter
  int ranks_on_this_host = 1;  // more ranks than cores: yield the core while waiting
  int threads_per_rank = 1;    // the waiting thread and those computing beside it
  Links links = Links::all;
  std::vector<int> host_of_rank;  // dense host ids (empty: every rank on this host)
  // Host names by rank, where the job spans hosts (empty otherwise): errors name the peer's host.
  std::vector<std::string> host_name_of_rank;

  // More ranks (times their busy threads) on this host than it has cores: a rank waiting may
  // hold the core its peer, or its own computation, needs.
  bool ranks_outnumber_cores() const;
  // Whether a rank links to `peer`, given which node each rank is on.
  bool links_to(const std::vector<int>& node_of_rank, int me, int peer) const;
  // Whether the job's ranks are on more than one host.
  bool spans_hosts() const;
  // "rank 3", or "rank 3 (host-b)" where the job spans hosts.
  std::string rank_name(int rank) const;
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

  // `bootstrap` (may be null) is where the job's abort message arrives and where it is posted.
  Transport(Bootstrap* bootstrap, const TransportOptions& options);
  virtual ~Transport();
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  virtual Request send(int peer, Tag tag, const void* data, std::size_t bytes) = 0;
  virtual Request recv(int peer, Tag tag, void* data, std::size_t bytes) = 0;
  // A message of at most `capacity` bytes; once complete, the request's `bytes` is its length.
  virtual Request recv_up_to(int peer, Tag tag, void* data, std::size_t capacity) = 0;

  // Drives communication once; true when it made progress.
  virtual bool progress() = 0;
  // Non-blocking completion check (no progress call). Throws coll::Error if the operation
  // failed (peer unreachable, message size mismatch).
  virtual bool test(Request& request) = 0;

  // Blocks until every request completes, through the Waiter, which owns the timeout, the abort
  // check and the error naming the silent peer.
  void wait_all(std::span<Request> requests);
  void wait(Request& request) { wait_all(std::span<Request>(&request, 1)); }
  // The same waiting for a condition of shared memory (node slots), under the same timeout.
  void wait_for(WaitCondition& condition);

  // Whether a message from `peer` with `tag` has arrived and waits for its receive (which is not
  // consumed). Needed where ranks of a node also hand each other data through node slots: an
  // algorithm waiting in them looks for the message of a peer that runs another algorithm.
  virtual bool probe(int peer, Tag tag) {
    (void)peer;
    (void)tag;
    return false;
  }

  // The Waiter's hooks (waiter.hpp) beyond progress and test; public so that a decorator or a
  // routing transport can forward them to the transports it holds.
  // Throws (usually through Waiter::peer_lost) when the link to `peer` is known to be broken.
  virtual void check_link(int peer) = 0;
  // Adds the descriptors that become ready when this transport has something to progress;
  // false when it has something already (the waiter then does not sleep).
  virtual bool add_wake_fds(std::vector<pollfd>& fds) = 0;
  // Returns when the transport may have something to progress, when `abort_fd` (-1: none)
  // becomes readable, or after max_us microseconds, whichever comes first. By default a poll
  // on add_wake_fds' descriptors.
  virtual void sleep_until_event(int abort_fd, int max_us);
  // A wait timed out with `reason`: tell the linked peers now (best effort), so that one waiting
  // on this rank names the cause, not this rank. True when some peer was told (by default none).
  virtual bool announce_failure(const std::string& reason) {
    (void)reason;
    return false;
  }
  // True when sleep_until_event returns as soon as a message is delivered (no system call or
  // device to poll): the waiter then sleeps at once, as spinning would only burn a core the
  // sending rank may need.
  virtual bool wakes_on_delivery() const { return false; }

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
  std::string fail_job(const std::string& reason);

  // A collective failed on this transport: peers may be stopped or gone and messages may be
  // in flight, so the teardown neither waits for peers nor expects requests to complete.
  // `reason` (the first one given stays) is what a transport may tell its peers as it closes.
  void mark_failed(const std::string& reason = "");
  bool failed() const { return failed_.load(std::memory_order_acquire) || interrupted(); }
  // Why it failed, once marked failed with a reason ("" otherwise).
  std::string failure_reason() const;

 protected:
  // For the transport's own reports: a lost peer, a message of the wrong size.
  Waiter& waiter() { return *waiter_; }

 private:
  std::unique_ptr<Waiter> waiter_;
  std::vector<pollfd> sleep_fds_;  // sleep_until_event's, reused
  std::once_flag interrupt_once_;
  std::string interrupt_reason_;  // written once, before interrupted_ is set
  std::atomic<bool> interrupted_{false};
  std::atomic<bool> failed_{false};
  mutable std::mutex failure_mutex_;
  std::string failure_reason_;  // under failure_mutex_
};

}  // namespace coll
