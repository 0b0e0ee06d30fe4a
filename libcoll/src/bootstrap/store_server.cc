#include "bootstrap/store_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
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

constexpr double kHelloTimeoutS = 10.0;

struct Client {
  Socket socket;
  store::Decoder decoder;
  bool authenticated = false;
  double connected_at = 0;
};

bool tokens_equal(const std::string& a, const std::string& b) {
  // Constant time in the token's length: no early exit that leaks a prefix match.
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

}  // namespace

struct StoreServer::State {
  std::string host;
  int port = 0;
  std::string token;
  Socket listener;
  int wake_pipe[2] = {-1, -1};
  std::thread thread;

  std::mutex mutex;  // guards abort_reason and stopping, written by other threads
  std::string abort_reason;
  bool stopping = false;

  std::vector<std::unique_ptr<Client>> clients;
  std::map<std::string, std::string> values;
  std::multimap<std::string, Client*> waiters;  // GETs waiting for their key
  std::string sent_abort;                       // the reason already pushed to clients

  void serve();
  void accept_client();
  bool handle(Client& client, store::Message&& message);  // false: drop the client
  void push_abort_if_new();
};

void StoreServer::State::accept_client() {
  const int fd = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  auto client = std::make_unique<Client>();
  client->socket = Socket(fd);
  client->connected_at = now_seconds();
  clients.push_back(std::move(client));
}

bool StoreServer::State::handle(Client& client, store::Message&& message) {
  using store::Op;
  auto reply = [&](Op op, const std::string& value) {
    client.socket.send_all(store::encode({op, "", value}));
  };
  if (!client.authenticated) {
    if (message.op != Op::Hello || !tokens_equal(message.key, token)) {
      reply(Op::Error, "store refused the connection: wrong job token (COLL_TOKEN)");
      return false;
    }
    client.authenticated = true;
    reply(Op::Reply, "welcome");
    if (!sent_abort.empty()) reply(Op::Abort, sent_abort);
    return true;
  }
  switch (message.op) {
    case Op::Set: {
      auto [begin, end] = waiters.equal_range(message.key);
      for (auto it = begin; it != end; ++it) {
        it->second->socket.send_all(store::encode({Op::Reply, "", message.value}));
      }
      waiters.erase(begin, end);
      values[message.key] = std::move(message.value);
      return true;
    }
    case Op::Get: {
      const auto found = values.find(message.key);
      if (found != values.end()) {
        reply(Op::Reply, found->second);
      } else {
        waiters.emplace(message.key, &client);
      }
      return true;
    }
    case Op::Add: {
      long long delta = 0;
      try {
        delta = std::stoll(message.value);
      } catch (const std::exception&) {
        reply(Op::Error, "malformed ADD delta");
        return false;
      }
      auto& stored = values[message.key];
      const long long total = (stored.empty() ? 0 : std::stoll(stored)) + delta;
      stored = std::to_string(total);
      reply(Op::Reply, stored);
      return true;
    }
    default:
      reply(Op::Error, "unexpected store request");
      return false;
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
  for (auto& client : clients) {
    if (!client->authenticated) continue;
    try {
      client->socket.send_all(store::encode({store::Op::Abort, "", reason}));
    } catch (const Error&) {
      // The client is gone; the poll loop drops it.
    }
  }
}

void StoreServer::State::serve() {
  std::vector<pollfd> fds;
  while (true) {
    {
      std::lock_guard lock(mutex);
      if (stopping) return;
    }
    push_abort_if_new();
    fds.clear();
    fds.push_back({listener.fd(), POLLIN, 0});
    fds.push_back({wake_pipe[0], POLLIN, 0});
    for (auto& client : clients) fds.push_back({client->socket.fd(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0) continue;
    if (fds[1].revents) {
      char drain[64];
      while (::read(wake_pipe[0], drain, sizeof drain) > 0) {
      }
    }
    std::vector<Client*> dropped;
    for (std::size_t i = 0; i < clients.size(); ++i) {
      Client& client = *clients[i];
      const short revents = fds[i + 2].revents;
      bool keep = true;
      if (revents & (POLLIN | POLLHUP | POLLERR)) {
        char buffer[65536];
        const ssize_t n = ::recv(client.socket.fd(), buffer, sizeof buffer, 0);
        if (n <= 0) {
          keep = false;
        } else {
          try {
            client.decoder.feed(buffer, static_cast<std::size_t>(n));
            while (keep) {
              auto message = client.decoder.next();
              if (!message) break;
              keep = handle(client, std::move(*message));
            }
          } catch (const Error&) {
            keep = false;  // malformed frame or a client that vanished mid-reply
          }
        }
      }
      if (keep && !client.authenticated && now_seconds() - client.connected_at > kHelloTimeoutS) {
        keep = false;
      }
      if (!keep) dropped.push_back(&client);
    }
    for (Client* gone : dropped) {
      std::erase_if(waiters, [gone](const auto& entry) { return entry.second == gone; });
      std::erase_if(clients, [gone](const auto& owned) { return owned.get() == gone; });
    }
    if (fds[0].revents & POLLIN) accept_client();
  }
}

StoreServer::StoreServer(const std::string& host, int port, std::string token)
    : state_(std::make_unique<State>()) {
  state_->host = host;
  state_->port = port;
  state_->token = std::move(token);
  state_->listener = Socket::listen(host, &state_->port);
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
