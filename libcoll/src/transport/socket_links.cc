#include "transport/socket_links.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <list>

#include "coll/error.hpp"

namespace coll {
namespace {

struct WireHeader {
  std::uint64_t tag;
  std::uint64_t bytes;
};
constexpr std::size_t kHeaderBytes = sizeof(WireHeader);

// Unexpected messages' buffers kept for reuse: touching fresh memory is slow on these VMs.
constexpr std::size_t kMaxSpareBuffers = 16;
// The header of a failed rank's last words (say_goodbye): no collective's tag.
constexpr Tag kGoodbyeTag = ~Tag{0};
constexpr std::size_t kMaxGoodbyeBytes = 1024;
// A link's staging buffer: short messages and their headers are read through it.
constexpr std::size_t kStagingBytes = 64 * 1024;

void set_option(int fd, int level, int name, int value) {
  ::setsockopt(fd, level, name, &value, sizeof value);
}

}  // namespace

struct SocketLinks::Buffer {
  std::unique_ptr<std::byte[]> bytes;  // not zeroed: the message overwrites it
  std::size_t capacity = 0;
};

struct SocketLinks::Operation {
  int peer;
  Tag tag;
  std::byte* data;
  std::size_t bytes;  // a send's length, a receive's capacity
  WireHeader header{};
  std::size_t header_moved = 0;  // a send's header bytes written
  std::size_t moved = 0;         // payload bytes written (sends)
  std::size_t length = 0;        // a receive's message length once it arrived
  State state = State::InProgress;
};

// A message that arrived before its receive was posted (or is too long for the receive).
struct SocketLinks::Arrival {
  Tag tag;
  Buffer buffer;
  std::size_t length;
  bool complete = false;
  Operation* claimed = nullptr;  // the receive it goes to once complete
};

struct SocketLinks::Link {
  int peer;
  Socket socket;
  std::deque<Operation*> sends;   // written in order; the front one is being written
  std::deque<Operation*> posted;  // receives no message has matched yet, in posting order
  std::list<Arrival> arrivals;    // unclaimed, or claimed and still arriving
  // The message being read: its header, then its payload into `target`.
  WireHeader incoming{};
  std::size_t header_read = 0;
  std::byte* target = nullptr;
  std::size_t payload_read = 0;
  Operation* reading_into = nullptr;   // the payload goes straight into this receive...
  Arrival* reading_arrival = nullptr;  // ...or into this arrival's buffer...
  std::string goodbye;                 // ...or it is a failed peer's reason (kGoodbyeTag)...
  bool stalled = false;  // ...or stays in the socket until a receive is posted (header_arrived)
  // Bytes read but not yet consumed: staging[staged_begin, staged_end).
  std::unique_ptr<std::byte[]> staging = std::make_unique_for_overwrite<std::byte[]>(kStagingBytes);
  std::size_t staged_begin = 0;
  std::size_t staged_end = 0;

  // What to sleep on: data unless stalled, room to write while sends wait.
  short events() const {
    return static_cast<short>((stalled ? 0 : POLLIN) | (sends.empty() ? 0 : POLLOUT));
  }
  std::uint32_t watched = 0;  // the events its socket is registered for in the epoll set
  std::string failure;
};

SocketLinks::SocketLinks(std::vector<Socket> sockets, std::size_t send_buffer_bytes)
    : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
  if (!epoll_.valid()) throw_system_error("epoll_create1");
  links_.resize(sockets.size());
  for (std::size_t peer = 0; peer < sockets.size(); ++peer) {
    if (!sockets[peer].valid()) continue;
    const int fd = sockets[peer].fd();
    set_option(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    if (send_buffer_bytes > 0) set_option(fd, SOL_SOCKET, SO_SNDBUF, int(send_buffer_bytes));
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    auto link_ptr = std::make_unique<Link>();
    link_ptr->peer = static_cast<int>(peer);
    link_ptr->socket = std::move(sockets[peer]);
    remote_.push_back(link_ptr.get());
    watch(*link_ptr);
    links_[peer] = std::move(link_ptr);
  }
  ready_.resize(std::max<std::size_t>(remote_.size(), 1));
}

SocketLinks::~SocketLinks() {
  cancel_all();
}

SocketLinks::Link& SocketLinks::link(int peer) const {
  if (peer < 0 || peer >= static_cast<int>(links_.size()) || !links_[peer]) {
    throw Error(Status::InternalError, "no socket to rank " + std::to_string(peer));
  }
  return *links_[static_cast<std::size_t>(peer)];
}

const std::string& SocketLinks::failure(int peer) const {
  return link(peer).failure;
}

std::size_t SocketLinks::kernel_send_buffer(int peer) const {
  int bytes = 0;
  socklen_t length = sizeof bytes;
  if (::getsockopt(link(peer).socket.fd(), SOL_SOCKET, SO_SNDBUF, &bytes, &length) != 0) {
    throw_system_error("getsockopt SO_SNDBUF");
  }
  return static_cast<std::size_t>(bytes);
}

SocketLinks::Operation* SocketLinks::send(int peer, Tag tag, const void* data, std::size_t bytes) {
  Link& to = link(peer);
  auto* operation = new Operation{peer, tag, static_cast<std::byte*>(const_cast<void*>(data)),
                                  bytes, WireHeader{tag, bytes}};
  live_.push_back(operation);
  to.sends.push_back(operation);
  if (to.sends.size() == 1) write_some(to);  // short messages leave at once
  return operation;
}

SocketLinks::Operation* SocketLinks::receive(int peer, Tag tag, void* data, std::size_t capacity) {
  Link& from = link(peer);
  auto* operation = new Operation{peer, tag, static_cast<std::byte*>(data), capacity};
  live_.push_back(operation);
  const auto arrival = std::find_if(from.arrivals.begin(), from.arrivals.end(),
                                    [&](auto& a) { return a.tag == tag && a.claimed == nullptr; });
  if (arrival == from.arrivals.end()) {
    from.posted.push_back(operation);
    if (from.stalled) {
      header_arrived(from);
      read_some(from);  // a short message may be staged whole already
    }
    return operation;
  }
  arrival->claimed = operation;
  if (arrival->complete) deliver(from, *arrival);
  return operation;
}

void SocketLinks::deliver(Link& link, Arrival& arrival) {
  Operation& operation = *arrival.claimed;
  operation.length = arrival.length;
  if (arrival.length > operation.bytes) {
    operation.state = State::Truncated;
  } else {
    if (arrival.length > 0) std::memcpy(operation.data, arrival.buffer.bytes.get(), arrival.length);
    operation.state = State::Done;
  }
  keep_spare(std::move(arrival.buffer));
  link.arrivals.remove_if([&](const Arrival& candidate) { return &candidate == &arrival; });
}

void SocketLinks::keep_spare(Buffer buffer) {
  if (buffer.capacity == 0) return;
  spare_buffers_.push_back(std::move(buffer));
  if (spare_buffers_.size() <= kMaxSpareBuffers) return;
  const auto smallest =
      std::min_element(spare_buffers_.begin(), spare_buffers_.end(),
                       [](const Buffer& a, const Buffer& b) { return a.capacity < b.capacity; });
  spare_buffers_.erase(smallest);
}

SocketLinks::Buffer SocketLinks::take_spare(std::size_t bytes) {
  auto best = spare_buffers_.end();
  for (auto it = spare_buffers_.begin(); it != spare_buffers_.end(); ++it) {
    if (it->capacity >= bytes && (best == spare_buffers_.end() || it->capacity < best->capacity)) {
      best = it;
    }
  }
  if (best == spare_buffers_.end()) {
    return Buffer{bytes > 0 ? std::make_unique_for_overwrite<std::byte[]>(bytes) : nullptr, bytes};
  }
  Buffer buffer = std::move(*best);
  spare_buffers_.erase(best);
  return buffer;
}

bool SocketLinks::write_some(Link& link) {
  bool moved = false;
  while (!link.sends.empty() && link.socket.valid()) {
    Operation& operation = *link.sends.front();
    iovec parts[2];
    int count = 0;
    if (operation.header_moved < kHeaderBytes) {
      parts[count++] = {reinterpret_cast<std::byte*>(&operation.header) + operation.header_moved,
                        kHeaderBytes - operation.header_moved};
    }
    if (operation.moved < operation.bytes) {
      parts[count++] = {operation.data + operation.moved, operation.bytes - operation.moved};
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<std::size_t>(count);
    const ssize_t n = ::sendmsg(link.socket.fd(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) broken(link, std::strerror(errno));
      break;
    }
    moved = true;
    std::size_t written = static_cast<std::size_t>(n);
    const std::size_t header = std::min(written, kHeaderBytes - operation.header_moved);
    operation.header_moved += header;
    operation.moved += written - header;
    if (operation.header_moved == kHeaderBytes && operation.moved == operation.bytes) {
      operation.state = State::Done;
      link.sends.pop_front();
    }
  }
  watch(link);  // writable wanted exactly while sends wait, and only sends change that here
  return moved;
}

// Short messages come with their header in one read, through the link's staging buffer; a
// payload's bulk goes straight from the socket to its destination.
bool SocketLinks::read_some(Link& link) {
  bool moved = false;
  while (link.socket.valid() && !link.stalled) {
    if (link.staged_begin == link.staged_end) {
      const bool bulk = link.header_read == kHeaderBytes &&
                        link.incoming.bytes - link.payload_read >= kStagingBytes;
      std::byte* at = bulk ? link.target + link.payload_read : link.staging.get();
      const std::size_t wanted = bulk ? link.incoming.bytes - link.payload_read : kStagingBytes;
      const ssize_t n = ::recv(link.socket.fd(), at, wanted, MSG_DONTWAIT);
      if (n == 0) {
        broken(link, "connection closed");
        break;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) broken(link, std::strerror(errno));
        break;
      }
      moved = true;
      // A short read emptied the socket: the next read waits for epoll to see more arrive.
      const bool drained = static_cast<std::size_t>(n) < wanted;
      if (bulk) {
        link.payload_read += static_cast<std::size_t>(n);
        if (link.payload_read == link.incoming.bytes) message_arrived(link);
        if (drained) break;
        continue;
      }
      link.staged_begin = 0;
      link.staged_end = static_cast<std::size_t>(n);
      if (drained) {
        consume_staged(link);
        break;
      }
    }
    consume_staged(link);
  }
  return moved;
}

// Moves staged bytes into the header or the payload's destination until the staging buffer is
// empty or the link stalls.
void SocketLinks::consume_staged(Link& link) {
  while (link.staged_begin < link.staged_end && !link.stalled) {
    const std::byte* from = link.staging.get() + link.staged_begin;
    const std::size_t available = link.staged_end - link.staged_begin;
    if (link.header_read < kHeaderBytes) {
      const std::size_t take = std::min(available, kHeaderBytes - link.header_read);
      std::memcpy(reinterpret_cast<std::byte*>(&link.incoming) + link.header_read, from, take);
      link.staged_begin += take;
      link.header_read += take;
      if (link.header_read == kHeaderBytes) header_arrived(link);
      continue;
    }
    const std::size_t take = std::min(available, link.incoming.bytes - link.payload_read);
    std::memcpy(link.target + link.payload_read, from, take);
    link.staged_begin += take;
    link.payload_read += take;
    if (link.payload_read == link.incoming.bytes) message_arrived(link);
  }
}

// The first receive posted for this tag takes the payload straight into its buffer when it fits.
// When none is posted and none waits on this link, the payload stays in the socket (the kernel
// holds it and TCP slows the sender) until a receive is posted: a pipelined sender runs ahead of
// its receiver's window, and buffering every segment cost a copy and fresh memory (3x slower at
// 64 MiB). A receive that waits for a later message must not wait behind it: then, as for a
// receive too short for it (reported as truncated), the message goes to an arrival's buffer.
void SocketLinks::header_arrived(Link& link) {
  link.payload_read = 0;
  link.reading_into = nullptr;
  link.reading_arrival = nullptr;
  const Tag tag = link.incoming.tag;
  if (tag == kGoodbyeTag) {
    if (link.incoming.bytes > kMaxGoodbyeBytes) return broken(link, "a malformed message");
    link.goodbye.assign(link.incoming.bytes, '\0');
    link.target = reinterpret_cast<std::byte*>(link.goodbye.data());
    link.stalled = false;
    if (link.incoming.bytes == 0) goodbye_arrived(link);
    return;
  }
  const auto posted =
      std::find_if(link.posted.begin(), link.posted.end(),
                   [&](const Operation* operation) { return operation->tag == tag; });
  link.stalled = link.posted.empty();
  if (link.stalled) return;
  if (posted != link.posted.end() && (*posted)->bytes >= link.incoming.bytes) {
    link.reading_into = *posted;
    link.target = link.reading_into->data;
    link.posted.erase(posted);
  } else {
    Arrival& arrival = link.arrivals.emplace_back(
        Arrival{tag, take_spare(link.incoming.bytes), link.incoming.bytes});
    if (posted != link.posted.end()) {
      arrival.claimed = *posted;
      link.posted.erase(posted);
    }
    link.reading_arrival = &arrival;
    link.target = arrival.buffer.bytes.get();
  }
  if (link.incoming.bytes == 0) message_arrived(link);
}

void SocketLinks::goodbye_arrived(Link& link) {
  link.header_read = 0;
  broken(link, "it failed: " + link.goodbye);
}

void SocketLinks::message_arrived(Link& link) {
  if (link.incoming.tag == kGoodbyeTag) return goodbye_arrived(link);
  link.header_read = 0;
  if (link.reading_into != nullptr) {
    link.reading_into->length = link.incoming.bytes;
    link.reading_into->state = State::Done;
    return;
  }
  link.reading_arrival->complete = true;
  if (link.reading_arrival->claimed != nullptr) deliver(link, *link.reading_arrival);
}

void SocketLinks::broken(Link& link, const std::string& why) {
  if (link.failure.empty()) link.failure = why;
  link.socket = Socket();
}

// A link's socket stays registered for data even while the link is stalled, whose readiness
// progress() then skips: a stall lasts until the next receive is posted, and unregistering and
// registering again would cost two system calls where the skip costs none. Writable only while
// sends wait, or every pass would report it.
void SocketLinks::watch(Link& link) {
  const std::uint32_t wanted = EPOLLIN | (link.sends.empty() ? 0u : std::uint32_t{EPOLLOUT});
  if (wanted == link.watched || !link.socket.valid()) return;
  epoll_event event{};
  event.events = wanted;
  event.data.ptr = &link;
  const int operation = link.watched == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  if (::epoll_ctl(epoll_.fd(), operation, link.socket.fd(), &event) != 0) {
    throw_system_error("epoll_ctl");
  }
  link.watched = wanted;
}

// One epoll_wait looks at the ready links only: poll() visited every socket on every pass of a
// wait (its symbols were 18 % of the samples of an 8-byte all-reduce across 4 emulated hosts x
// 2 ranks, epoll's 9 %).
bool SocketLinks::progress() {
  if (remote_.empty()) return false;
  const int ready = ::epoll_wait(epoll_.fd(), ready_.data(), static_cast<int>(ready_.size()), 0);
  bool moved = false;
  for (int i = 0; i < ready; ++i) {
    Link& link = *static_cast<Link*>(ready_[static_cast<std::size_t>(i)].data.ptr);
    const std::uint32_t events = ready_[static_cast<std::size_t>(i)].events;
    if (events & EPOLLOUT) moved |= write_some(link);
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) moved |= read_some(link);
  }
  for (Link* link : remote_) {  // bytes read before a stall that a posted receive ended
    if (link->staged_begin < link->staged_end && !link->stalled) moved |= read_some(*link);
  }
  return moved;
}

void SocketLinks::add_poll_fds(std::vector<pollfd>& fds) const {
  for (const Link* link : remote_) {
    if (!link->socket.valid()) continue;
    fds.push_back({link->socket.fd(), link->events(), 0});
  }
}

bool SocketLinks::probe(int peer, Tag tag) const {
  const Link& from = link(peer);
  if (from.stalled && from.incoming.tag == tag) return true;
  return std::any_of(from.arrivals.begin(), from.arrivals.end(), [&](const Arrival& arrival) {
    return arrival.tag == tag && arrival.claimed == nullptr;
  });
}

SocketLinks::Result SocketLinks::take_result(Operation* operation) {
  const Result result{operation->state, operation->length};
  if (result.state != State::InProgress) release(operation);
  return result;
}

void SocketLinks::release(Operation* operation) {
  const auto it = std::find(live_.begin(), live_.end(), operation);
  if (it != live_.end()) {
    *it = live_.back();
    live_.pop_back();
  }
  delete operation;
}

bool SocketLinks::say_goodbye(const std::string& reason) {
  const std::string text = reason.substr(0, kMaxGoodbyeBytes);
  const WireHeader header{kGoodbyeTag, text.size()};
  std::string message(reinterpret_cast<const char*>(&header), kHeaderBytes);
  message += text;
  bool told = false;
  for (Link* link : remote_) {
    if (!link->socket.valid()) continue;
    // Not inside a message: its peer would read these bytes as that message's payload.
    const bool between_messages = link->sends.empty() || (link->sends.front()->header_moved == 0);
    if (!between_messages) continue;
    told |=
        ::send(link->socket.fd(), message.data(), message.size(), MSG_DONTWAIT | MSG_NOSIGNAL) > 0;
  }
  return told;
}

void SocketLinks::cancel_all() {
  for (auto& link_ptr : links_) {
    if (!link_ptr) continue;
    link_ptr->sends.clear();
    link_ptr->posted.clear();
    link_ptr->arrivals.clear();
    link_ptr->reading_into = nullptr;
    link_ptr->reading_arrival = nullptr;
    link_ptr->socket = Socket();
  }
  for (Operation* operation : live_) delete operation;
  live_.clear();
}

}  // namespace coll
