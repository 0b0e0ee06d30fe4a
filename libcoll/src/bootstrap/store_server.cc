#include "bootstrap/store_server.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "bootstrap/socket.hpp"
#include "bootstrap/store_wire.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

constexpr std::size_t kReadChunkBytes = 64u << 10;
constexpr int kAcceptsPerRound = 64;  // a connection flood cannot starve the connected clients

struct Connection {
  store::ConnectionId id = 0;
  Socket socket;
  store::Decoder decoder;
  std::deque<std::string> outbox;  // frames not yet sent; the front one partly, maybe
  std::size_t front_sent = 0;
  std::size_t queued_bytes = 0;
  double connected_at = 0;
  bool closing = false;
  std::string close_reason;  // logged when the connection is closed; empty for a clean hang-up
  std::string peer;          // who it was ("rank 3"), for the log line
  // Reset rather than closed: a client over a memory limit does not read, so the end of a
  // closed stream would wait behind its unread replies and never reach it.
  bool reset = false;

  std::size_t held_bytes() const { return decoder.held_bytes() + queued_bytes; }
};

bool would_block(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

}  // namespace

struct StoreServer::State {
  State(std::string token_, int job_size, const StoreLimits& limits_)
      : limits(limits_),
        token(std::move(token_)),
        service(token, job_size, limits.service, [this](store::ConnectionId to, std::string frame) {
          queue(to, std::move(frame));
        }) {}

  StoreLimits limits;
  std::string host;
  int port = 0;
  std::string token;
  Socket listener;
  int wake_pipe[2] = {-1, -1};
  std::thread thread;

  std::mutex mutex;  // guards abort_reason and stopping, written by other threads
  std::string abort_reason;
  bool stopping = false;

  // Held by the store thread while it works (not while it polls), so that other threads can
  // read the service's values.
  std::mutex service_mutex;
  store::Service service;
  std::map<store::ConnectionId, Connection> connections;
  store::ConnectionId next_id = 1;
  std::string sent_abort;  // the reason already pushed to clients

  void serve();
  void serve_round(int timeout_ms);
  void accept_clients();
  void receive(store::ConnectionId id, Connection& connection);
  void queue(store::ConnectionId to, std::string frame);
  void flush(Connection& connection);
  void close(Connection& connection, std::string reason);
  void drop_for_memory(Connection& connection, std::string reason);
  void enforce_memory_limits();
  void reap(Connection& connection);
  void push_abort_if_new();
};

void StoreServer::State::accept_clients() {
  for (int i = 0; i < kAcceptsPerRound; ++i) {
    const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    const store::ConnectionId id = next_id++;
    Connection& connection = connections[id];
    connection.id = id;
    connection.socket = Socket(fd);
    connection.decoder.limit(limits.hello_frame_bytes);
    connection.connected_at = now_seconds();
    service.connected(id);
  }
}

void StoreServer::State::close(Connection& connection, std::string reason) {
  if (connection.closing) return;
  connection.closing = true;
  connection.close_reason = std::move(reason);
  // Its rank is free at once: a process that reconnects (a new communicator) may say hello in
  // this same round.
  connection.peer = service.describe(connection.id);
  service.disconnect(connection.id);
}

void StoreServer::State::drop_for_memory(Connection& connection, std::string reason) {
  close(connection, std::move(reason));
  connection.reset = true;
}

void StoreServer::State::queue(store::ConnectionId to, std::string frame) {
  const auto found = connections.find(to);
  if (found == connections.end() || found->second.closing) return;
  Connection& connection = found->second;
  connection.queued_bytes += frame.size();
  connection.outbox.push_back(std::move(frame));
  if (connection.held_bytes() > limits.connection_bytes) {
    drop_for_memory(connection,
                    "holds " + std::to_string(connection.held_bytes()) +
                        " bytes of unsent replies and unread requests, over the limit of " +
                        std::to_string(limits.connection_bytes) +
                        " per connection (a client that does not read its replies?)");
  }
}

void StoreServer::State::receive(store::ConnectionId id, Connection& connection) {
  // Before the hello, read no more than one hello frame can be: an unauthenticated client
  // never makes the store hold more.
  std::size_t room = kReadChunkBytes;
  if (!service.authenticated(id)) {
    room = store::kFrameHeaderBytes + limits.hello_frame_bytes - connection.decoder.pending_bytes();
  }
  char buffer[kReadChunkBytes];
  const ssize_t n = ::recv(connection.socket.fd(), buffer, room, 0);
  if (n == 0) return close(connection, "");
  if (n < 0) {
    if (!would_block(errno)) close(connection, "");
    return;
  }
  connection.decoder.feed(buffer, static_cast<std::size_t>(n));
  while (!connection.closing) {
    connection.decoder.limit(service.authenticated(id) ? limits.frame_bytes
                                                       : limits.hello_frame_bytes);
    auto message = connection.decoder.next();
    if (!message) break;
    if (auto why = service.handle(id, std::move(*message))) close(connection, *why);
  }
  if (!connection.closing && connection.held_bytes() > limits.connection_bytes) {
    drop_for_memory(connection, "holds " + std::to_string(connection.held_bytes()) +
                                    " bytes, over the limit of " +
                                    std::to_string(limits.connection_bytes) + " per connection");
  }
}

void StoreServer::State::flush(Connection& connection) {
  while (!connection.outbox.empty()) {
    const std::string& frame = connection.outbox.front();
    const ssize_t n = ::send(connection.socket.fd(), frame.data() + connection.front_sent,
                             frame.size() - connection.front_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (!would_block(errno)) close(connection, "");
      return;
    }
    connection.front_sent += static_cast<std::size_t>(n);
    if (connection.front_sent < frame.size()) return;
    connection.queued_bytes -= frame.size();
    connection.front_sent = 0;
    connection.outbox.pop_front();
  }
}

void StoreServer::State::enforce_memory_limits() {
  std::size_t total = 0;
  for (const auto& [id, connection] : connections) total += connection.held_bytes();
  while (total > limits.all_connections_bytes) {
    Connection* largest = nullptr;
    for (auto& [id, connection] : connections) {
      if (!connection.closing && (!largest || connection.held_bytes() > largest->held_bytes())) {
        largest = &connection;
      }
    }
    if (largest == nullptr) return;
    drop_for_memory(*largest, "holds " + std::to_string(largest->held_bytes()) +
                                  " bytes, the most while all connections held " +
                                  std::to_string(total) + ", over the store's limit of " +
                                  std::to_string(limits.all_connections_bytes));
    total -= largest->held_bytes();
  }
}

void StoreServer::State::reap(Connection& connection) {
  if (connection.reset) {
    const linger reset_now{1, 0};
    ::setsockopt(connection.socket.fd(), SOL_SOCKET, SO_LINGER, &reset_now, sizeof reset_now);
  } else if (!connection.close_reason.empty()) {
    flush(connection);  // best effort: the refusal tells a well-meaning client what went wrong
  }
  if (!connection.close_reason.empty()) {
    std::cerr << "coll store: closed the connection of " + connection.peer + ": " +
                     connection.close_reason + "\n";
  }
}

void StoreServer::State::push_abort_if_new() {
  std::string reason;
  {
    std::lock_guard lock(mutex);
    reason = abort_reason;
  }
  if (reason.empty() || reason == sent_abort) return;
  sent_abort = reason;
  service.abort(reason);
}

void StoreServer::State::serve_round(int timeout_ms) {
  std::unique_lock working(service_mutex);
  push_abort_if_new();
  std::vector<pollfd> fds;
  std::vector<std::pair<store::ConnectionId, Connection*>> polled;
  fds.push_back({listener.fd(), POLLIN, 0});
  fds.push_back({wake_pipe[0], POLLIN, 0});
  for (auto& [id, connection] : connections) {
    const short events = POLLIN | (connection.outbox.empty() ? 0 : POLLOUT);
    fds.push_back({connection.socket.fd(), events, 0});
    polled.emplace_back(id, &connection);
  }
  working.unlock();
  const int polled_ready = ::poll(fds.data(), fds.size(), timeout_ms);
  working.lock();
  if (polled_ready < 0) return;
  if (fds[1].revents) {
    char drain[64];
    while (::read(wake_pipe[0], drain, sizeof drain) > 0) {
    }
  }
  const double now = now_seconds();
  for (std::size_t i = 0; i < polled.size(); ++i) {
    auto [id, connection] = polled[i];
    if (connection->closing) continue;
    try {
      if (fds[i + 2].revents & (POLLIN | POLLHUP | POLLERR)) receive(id, *connection);
    } catch (const std::exception& error) {
      close(*connection, error.what());  // a malformed frame, or no memory for a request
    }
    if (!service.authenticated(id) && now - connection->connected_at > limits.hello_timeout_s) {
      close(*connection, "no hello within " + std::to_string(int(limits.hello_timeout_s)) + " s");
    }
  }
  push_abort_if_new();
  for (auto& [id, connection] : connections) {
    if (!connection.closing) flush(connection);
  }
  enforce_memory_limits();
  for (auto it = connections.begin(); it != connections.end();) {
    if (it->second.closing) {
      reap(it->second);
      it = connections.erase(it);
    } else {
      ++it;
    }
  }
  if (fds[0].revents & POLLIN) accept_clients();
}

void StoreServer::State::serve() {
  while (true) {
    {
      std::lock_guard lock(mutex);
      if (stopping) return;
    }
    try {
      serve_round(1000);
    } catch (const std::exception& error) {
      // Nothing a client sends gets here; this is the store running out of memory. It keeps
      // serving: the memory limits drop the clients that hold most.
      std::cerr << std::string("coll store: ") + error.what() + "\n";
    }
  }
}

StoreServer::StoreServer(const std::string& host, int port, std::string token, int job_size,
                         const StoreLimits& limits)
    : state_(std::make_unique<State>(std::move(token), job_size, limits)) {
  state_->host = host;
  state_->port = port;
  state_->listener = Socket::listen(host, &state_->port);
  if (::fcntl(state_->listener.fd(), F_SETFL, O_NONBLOCK) != 0) throw_system_error("fcntl");
  if (::pipe2(state_->wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw_system_error("pipe");
  state_->thread = std::thread([state = state_.get()] { state->serve(); });
}

StoreServer::~StoreServer() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
  }
  const char wake = 1;
  [[maybe_unused]] const auto ignored = ::write(state_->wake_pipe[1], &wake, 1);
  state_->thread.join();
  ::close(state_->wake_pipe[0]);
  ::close(state_->wake_pipe[1]);
}

std::string StoreServer::address() const {
  return state_->host + ":" + std::to_string(state_->port);
}

const std::string& StoreServer::token() const {
  return state_->token;
}

std::optional<std::string> StoreServer::value(const std::string& key) const {
  std::lock_guard lock(state_->service_mutex);
  return state_->service.value(key);
}

void StoreServer::abort_all(const std::string& reason) {
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->abort_reason.empty()) return;  // the first failure is the one to report
    state_->abort_reason = reason;
  }
  const char wake = 1;
  [[maybe_unused]] const auto ignored = ::write(state_->wake_pipe[1], &wake, 1);
}

std::string make_job_token() {
  unsigned char bytes[16];
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    throw_system_error("getrandom");
  }
  std::string token;
  char hex[3];
  for (unsigned char byte : bytes) {
    std::snprintf(hex, sizeof hex, "%02x", byte);
    token += hex;
  }
  return token;
}

}  // namespace coll
