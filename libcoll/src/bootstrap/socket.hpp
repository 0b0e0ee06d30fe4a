// Thin RAII wrappers over TCP sockets for the bootstrap store and the links between nodes.
#pragma once

#include <string>
#include <utility>

namespace coll {

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Listens on host:port (port 0 picks a free one; the chosen port is returned in *port).
  static Socket listen(const std::string& host, int* port);
  // Bound to host:port but not listening yet, so that connections are refused until
  // start_listening(): a port can be published before anyone is there to answer on it.
  static Socket bound(const std::string& host, int* port);
  void start_listening() const;
  // Connects, retrying until timeout_s (the listener may not be up yet).
  static Socket connect(const std::string& host, int port, double timeout_s);

  // Sends everything or throws (SIGPIPE is suppressed).
  void send_all(const std::string& bytes) const;

 private:
  int fd_ = -1;
};

// Splits "host:port"; throws InvalidArgument naming `what` on a malformed address.
std::pair<std::string, int> split_host_port(const std::string& address, const char* what);

}  // namespace coll
