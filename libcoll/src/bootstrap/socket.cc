#include "bootstrap/socket.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

sockaddr_in resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
    throw Error(Status::InvalidArgument, "cannot resolve store host '" + host + "'");
  }
  sockaddr_in address = *reinterpret_cast<sockaddr_in*>(found->ai_addr);
  freeaddrinfo(found);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  return address;
}

}  // namespace

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Socket Socket::listen(const std::string& host, int* port) {
  Socket socket = bound(host, port);
  socket.start_listening();
  return socket;
}

Socket Socket::bound(const std::string& host, int* port) {
  Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket.valid()) throw_system_error("socket");
  const int on = 1;
  ::setsockopt(socket.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address = resolve(host, *port);
  if (::bind(socket.fd(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw_system_error("bind " + host + ":" + std::to_string(*port));
  }
  socklen_t length = sizeof address;
  ::getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&address), &length);
  *port = ntohs(address.sin_port);
  return socket;
}

void Socket::start_listening() const {
  if (::listen(fd_, 1024) != 0) throw_system_error("listen");
}

Socket Socket::connect(const std::string& host, int port, double timeout_s) {
  const sockaddr_in address = resolve(host, port);
  const double give_up = now_seconds() + timeout_s;
  while (true) {
    Socket socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket.valid()) throw_system_error("socket");
    if (::connect(socket.fd(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
      const int on = 1;
      ::setsockopt(socket.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      return socket;
    }
    if ((errno != ECONNREFUSED && errno != EINTR) || now_seconds() > give_up) {
      throw_system_error("connect to " + host + ":" + std::to_string(port));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Socket::send_all(const std::string& bytes) const {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_system_error("send to store");
    }
    sent += static_cast<std::size_t>(n);
  }
}

std::pair<std::string, int> split_host_port(const std::string& address, const char* what) {
  const auto colon = address.rfind(':');
  int port = -1;
  if (colon != std::string::npos && colon > 0) {
    try {
      std::size_t used = 0;
      port = std::stoi(address.substr(colon + 1), &used);
      if (used != address.size() - colon - 1) port = -1;
    } catch (const std::exception&) {
      port = -1;
    }
  }
  if (port <= 0 || port > 65535) {
    throw Error(Status::InvalidArgument,
                std::string(what) + "='" + address + "' is not of the form host:port");
  }
  return {address.substr(0, colon), port};
}

}  // namespace coll
