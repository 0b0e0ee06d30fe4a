// Tagged messages over plain TCP sockets, one connection per pair of linked ranks (the sockets
// transport, socket_transport.cc). Each message is a 16-byte header (tag, length) and its payload.
// A receive posted before its message's header arrives gets the payload straight from the socket
// into its buffer; a message nobody waits for yet lands in a pooled buffer and is copied out when
// its receive is posted. Sends go from the caller's buffer to the socket: no copy in user space
// (UCX's TCP transport copies every received fragment once more, docs/bandwidth.md).
#pragma once

#include <poll.h>
#include <sys/epoll.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/socket.hpp"
#include "transport/transport.hpp"

namespace coll {

class SocketLinks {
 public:
  struct Operation;

  // Over the connected `sockets` (by rank; invalid for ranks not linked: see
  // socket_rendezvous.hpp). Each socket's send buffer is `send_buffer_bytes` (SO_SNDBUF; 0
  // leaves it to the kernel's autotuning).
  SocketLinks(std::vector<Socket> sockets, std::size_t send_buffer_bytes);
  ~SocketLinks();
  SocketLinks(const SocketLinks&) = delete;
  SocketLinks& operator=(const SocketLinks&) = delete;

  // Start an operation; the handle stays valid until take_result or cancel_all.
  Operation* send(int peer, Tag tag, const void* data, std::size_t bytes);
  Operation* receive(int peer, Tag tag, void* data, std::size_t capacity);

  enum class State { InProgress, Done, Truncated };
  struct Result {
    State state;
    std::size_t bytes;  // a receive's message length (also when truncated)
  };
  // InProgress leaves the operation alive; otherwise it is released.
  Result take_result(Operation* operation);

  // Moves bytes on every link that is ready; true when any moved.
  bool progress();
  // Whether a message from `peer` with `tag` has arrived (its header at least) unclaimed.
  bool probe(int peer, Tag tag) const;
  // Why the link to `peer` broke ("" while it works).
  const std::string& failure(int peer) const;
  // The kernel's send buffer of the link to `peer` (SO_SNDBUF as the kernel reports it).
  std::size_t kernel_send_buffer(int peer) const;
  // The sockets to wake on: readable, or writable when sends are waiting.
  void add_poll_fds(std::vector<pollfd>& fds) const;
  // After a failure: releases every operation (their buffers may be gone) and closes the links.
  void cancel_all();
  // Best effort, as a failed rank closes: tells every peer whose link is between two messages
  // why (cut to 1 KiB), so that its wait ends naming the cause, not this rank, where the job has
  // no other channel for it (MPI). The peer's link then fails with "it failed: <reason>".
  // True when some peer was sent the reason.
  bool say_goodbye(const std::string& reason);

 private:
  struct Buffer;
  struct Arrival;
  struct Link;
  Link& link(int peer) const;
  void watch(Link& link);
  bool write_some(Link& link);
  void goodbye_arrived(Link& link);
  bool read_some(Link& link);
  void consume_staged(Link& link);
  void header_arrived(Link& link);
  void message_arrived(Link& link);
  // Copies a complete arrival into the receive that claimed it and forgets the arrival.
  void deliver(Link& link, Arrival& arrival);
  void broken(Link& link, const std::string& why);
  void release(Operation* operation);
  Buffer take_spare(std::size_t bytes);
  void keep_spare(Buffer buffer);

  Socket epoll_;  // the epoll set of every link's socket (Socket owns and closes the descriptor)
  std::vector<std::unique_ptr<Link>> links_;  // by rank; null for ranks not linked
  std::vector<Link*> remote_;                 // the non-null links_
  std::vector<epoll_event> ready_;            // progress's epoll_wait results, reused
  std::vector<Operation*> live_;              // every operation not yet released
  std::vector<Buffer> spare_buffers_;         // for unexpected messages, reused
};

}  // namespace coll
