#include "transport/socket_rendezvous.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/job_secret.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"
#include "core/log.hpp"

namespace coll {
namespace {

constexpr std::string_view kMagic = "collink1";  // a challenge starts with it
constexpr std::size_t kNonceBytes = 16;
constexpr std::size_t kChallengeBytes = kMagic.size() + kNonceBytes;
constexpr std::size_t kHelloBytes = 4 + 4 + kNonceBytes + sizeof(Digest);
constexpr std::size_t kWelcomeBytes = sizeof(Digest);
// Connections proving themselves at once; more are closed as they come (a real rank whose
// connection is closed so tries again).
constexpr std::size_t kMaxPending = 64;
constexpr double kRetrySeconds = 0.02;
constexpr int kMaxPollMs = 100;

// What a rank publishes: "10.1.0.2:40277 hostname".
struct PeerAddress {
  std::string ip;
  int port = 0;
  std::string host;
  std::string text() const { return ip + ":" + std::to_string(port); }
  std::string named(int rank) const { return "rank " + std::to_string(rank) + " (" + host + ")"; }
};

PeerAddress parse_address(const std::string& published) {
  const auto space = published.find(' ');
  const auto [ip, port] = split_host_port(published.substr(0, space), "sockets address");
  return {ip, port, space == std::string::npos ? "?" : published.substr(space + 1)};
}

std::string this_host() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::string u32(std::uint32_t value) {
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return bytes;
}

std::uint32_t read_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i)
    value |= std::uint32_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return value;
}

std::string as_text(const Digest& digest) {
  return std::string(digest.begin(), digest.end());
}

// What each side's digest covers: who links to whom, and both fresh nonces.
Digest proof(const std::string& secret, std::string_view role, int from, int to,
             const std::string& acceptor_nonce, const std::string& connector_nonce) {
  return hmac_sha256(secret, std::string(role) + u32(static_cast<std::uint32_t>(from)) +
                                 u32(static_cast<std::uint32_t>(to)) + acceptor_nonce +
                                 connector_nonce);
}

Digest digest_at(const std::string& bytes, std::size_t at) {
  Digest digest{};
  std::memcpy(digest.data(), bytes.data() + at, digest.size());
  return digest;
}

sockaddr_in socket_address(const std::string& ip, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, ip.c_str(), &address.sin_addr) != 1) {
    throw Error(Status::InvalidArgument, "'" + ip + "' is not an IPv4 address");
  }
  return address;
}

void set_blocking(int fd, bool blocking) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

// Reads what is there into `inbox` up to `wanted` bytes; false when the connection ended.
bool read_into(int fd, std::string& inbox, std::size_t wanted) {
  while (inbox.size() < wanted) {
    char buffer[128];
    const ssize_t n = ::recv(fd, buffer, std::min(sizeof buffer, wanted - inbox.size()), 0);
    if (n > 0) {
      inbox.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  return true;
}

// Short messages on a fresh connection: the kernel's buffer always takes them whole.
bool send_now(int fd, const std::string& bytes) {
  return ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT) ==
         static_cast<ssize_t>(bytes.size());
}

class Rendezvous {
 public:
  Rendezvous(Bootstrap& bootstrap, const std::vector<bool>& linked,
             const RendezvousOptions& options)
      : me_(bootstrap.rank()), linked_(linked), options_(options) {
    // Listening only once the addresses are known and only while a lower rank is still to
    // connect: a connection before or after would wait unanswered (a peer that comes early is
    // refused and tries again).
    int port = 0;
    listener_ = Socket::bound(options.interface.address, &port);
    set_blocking(listener_.fd(), false);
    const auto published =
        bootstrap.allgather("sockets/address", options.interface.address + ":" +
                                                   std::to_string(port) + " " + this_host());
    for (int rank = 0; rank < static_cast<int>(published.size()); ++rank) {
      addresses_.push_back(parse_address(published[rank]));
    }
    sockets_.resize(published.size());
    for (int peer = me_ + 1; peer < static_cast<int>(linked.size()); ++peer) {
      if (linked[peer]) outgoing_.push_back({peer});
    }
    if (expects_incoming()) listener_.start_listening();
  }

  std::vector<Socket> run() {
    const double give_up = now_seconds() + options_.timeout_s;
    while (!complete()) {
      if (now_seconds() > give_up) throw Error(Status::Timeout, missing_ranks());
      poll_once();
    }
    for (auto& socket : sockets_) {
      if (socket.valid()) set_blocking(socket.fd(), true);
    }
    return std::move(sockets_);
  }

 private:
  enum class Stage { Idle, Connecting, AwaitChallenge, AwaitWelcome, Done };
  struct Outgoing {
    int peer;
    Stage stage = Stage::Idle;
    Socket socket;
    std::string inbox;
    std::string acceptor_nonce, connector_nonce;
    double retry_at = 0;
    std::string last_error = "no answer";
  };
  struct Incoming {
    Socket socket;
    std::string from;  // "ip:port"
    std::string ip;
    std::string nonce;
    std::string inbox;
    double deadline;
  };

  // What a connection in `stage` waits for: room to finish connecting, or the next answer.
  static short awaited_events(Stage stage) {
    if (stage == Stage::Connecting) return POLLOUT;
    if (stage == Stage::AwaitChallenge || stage == Stage::AwaitWelcome) return POLLIN;
    return 0;
  }

  bool complete() const {
    for (int peer = 0; peer < static_cast<int>(linked_.size()); ++peer) {
      if (linked_[peer] && !sockets_[peer].valid()) return false;
    }
    return true;
  }

  bool expects_incoming() const {
    for (int peer = 0; peer < me_; ++peer) {
      if (linked_[peer] && !sockets_[peer].valid()) return true;
    }
    return false;
  }

  void poll_once() {
    std::vector<pollfd> fds;
    const bool listening = expects_incoming();
    if (!listening) listener_ = Socket();  // strangers queued there get a reset, not a wait
    if (listening) fds.push_back({listener_.fd(), POLLIN, 0});
    for (auto& out : outgoing_) {
      if (out.stage == Stage::Idle && now_seconds() >= out.retry_at) start_connect(out);
      const short events = awaited_events(out.stage);
      fds.push_back({events ? out.socket.fd() : -1, events, 0});
    }
    for (auto& in : pending_) fds.push_back({in.socket.fd(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), kMaxPollMs);

    std::size_t next = 0;
    if (listening && (fds[next++].revents & POLLIN)) accept_all();
    for (auto& out : outgoing_) {
      const short events = fds[next++].revents;
      if (events != 0) advance(out);
    }
    for (std::size_t i = 0; i < pending_.size() && next < fds.size(); ++i, ++next) {
      if (fds[next].revents != 0) examine(pending_[i]);
    }
    std::erase_if(pending_, [&](Incoming& in) {
      if (!in.socket.valid()) return true;
      if (now_seconds() < in.deadline) return false;
      refuse(in, "sent no valid greeting within " + seconds(options_.handshake_s));
      return true;
    });
  }

  static std::string seconds(double value) {
    std::string text = std::to_string(value);
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
    return text + " s";
  }

  // ----- the connecting side -----
  void start_connect(Outgoing& out) {
    out.socket = Socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!out.socket.valid()) throw_system_error("socket");
    // From this rank's own address: the acceptor checks that the connection comes from it.
    const sockaddr_in local = socket_address(options_.interface.address, 0);
    if (::bind(out.socket.fd(), reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
      throw_system_error("bind to " + options_.interface.address);
    }
    const PeerAddress& to = addresses_[out.peer];
    const sockaddr_in remote = socket_address(to.ip, to.port);
    out.inbox.clear();
    out.stage = Stage::Connecting;
    if (::connect(out.socket.fd(), reinterpret_cast<const sockaddr*>(&remote), sizeof remote) !=
            0 &&
        errno != EINPROGRESS) {
      retry(out, std::strerror(errno));
    }
  }

  void retry(Outgoing& out, const std::string& why) {
    out.last_error = why;
    out.socket = Socket();
    out.stage = Stage::Idle;
    out.retry_at = now_seconds() + kRetrySeconds;
  }

  void advance(Outgoing& out) {
    const int fd = out.socket.fd();
    if (out.stage == Stage::Connecting) {
      int error = 0;
      socklen_t length = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) return retry(out, std::strerror(error));
      out.stage = Stage::AwaitChallenge;
      return;
    }
    const std::size_t wanted = out.stage == Stage::AwaitChallenge ? kChallengeBytes : kWelcomeBytes;
    if (!read_into(fd, out.inbox, wanted)) {
      // Closed before the challenge: the acceptor had too many connections to prove; after the
      // answer: it refused this rank's proof.
      if (out.stage == Stage::AwaitChallenge) return retry(out, "closed before its challenge");
      throw Error(Status::SystemError, connect_failure(out,
                                                       "it refused this rank's proof: the two "
                                                       "ranks do not share the job's secret"));
    }
    if (out.inbox.size() < wanted) return;
    if (out.stage == Stage::AwaitChallenge) {
      if (!out.inbox.starts_with(kMagic)) {
        throw Error(Status::SystemError,
                    connect_failure(out, "what answers there is not a rank of a libcoll job"));
      }
      out.acceptor_nonce = out.inbox.substr(kMagic.size());
      out.connector_nonce = random_bytes(kNonceBytes);
      const std::string hello = u32(static_cast<std::uint32_t>(me_)) +
                                u32(static_cast<std::uint32_t>(out.peer)) + out.connector_nonce +
                                as_text(proof(options_.secret, "hello", me_, out.peer,
                                              out.acceptor_nonce, out.connector_nonce));
      if (!send_now(fd, hello)) return retry(out, std::strerror(errno));
      out.inbox.clear();
      out.stage = Stage::AwaitWelcome;
      return;
    }
    const Digest expected =
        proof(options_.secret, "welcome", me_, out.peer, out.acceptor_nonce, out.connector_nonce);
    if (!same_digest(digest_at(out.inbox, 0), expected)) {
      throw Error(Status::SystemError,
                  connect_failure(out, "what answers there does not know the job's secret"));
    }
    sockets_[out.peer] = std::move(out.socket);
    out.stage = Stage::Done;
  }

  std::string connect_failure(const Outgoing& out, const std::string& why) const {
    const PeerAddress& to = addresses_[out.peer];
    return addresses_[me_].named(me_) + " cannot link to " + to.named(out.peer) + " at " +
           to.text() + " from " + options_.interface.name + " " + options_.interface.address +
           ": " + why;
  }

  // ----- the accepting side -----
  void accept_all() {
    while (true) {
      sockaddr_in from{};
      socklen_t length = sizeof from;
      Socket socket(::accept4(listener_.fd(), reinterpret_cast<sockaddr*>(&from), &length,
                              SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!socket.valid()) return;  // nothing more waiting (or a transient error: poll again)
      char ip[INET_ADDRSTRLEN] = {};
      ::inet_ntop(AF_INET, &from.sin_addr, ip, sizeof ip);
      Incoming in{std::move(socket),
                  std::string(ip) + ":" + std::to_string(ntohs(from.sin_port)),
                  ip,
                  random_bytes(kNonceBytes),
                  {},
                  now_seconds() + options_.handshake_s};
      if (pending_.size() >= kMaxPending) {
        refuse(in, "too many connections proving themselves at once");
        continue;
      }
      if (!send_now(in.socket.fd(), std::string(kMagic) + in.nonce)) {
        refuse(in, "could not be sent its challenge");
        continue;
      }
      pending_.push_back(std::move(in));
    }
  }

  void examine(Incoming& in) {
    if (!read_into(in.socket.fd(), in.inbox, kHelloBytes)) return refuse(in, "closed it");
    if (in.inbox.size() < kHelloBytes) return;
    const auto from = static_cast<int>(read_u32(in.inbox, 0));
    const auto to = static_cast<int>(read_u32(in.inbox, 4));
    const std::string connector_nonce = in.inbox.substr(8, kNonceBytes);
    const Digest expected = proof(options_.secret, "hello", from, to, in.nonce, connector_nonce);
    if (!same_digest(digest_at(in.inbox, 8 + kNonceBytes), expected)) {
      return refuse(in, "its proof does not match the job's secret");
    }
    if (to != me_ || from < 0 || from >= me_ || !linked_[from]) {
      return refuse(in, "it claims rank " + std::to_string(from) + " linking to rank " +
                            std::to_string(to) + ", which this rank does not expect");
    }
    if (sockets_[from].valid()) {
      return refuse(in, "rank " + std::to_string(from) + " is linked already");
    }
    if (in.ip != addresses_[from].ip) {
      return refuse(in, "rank " + std::to_string(from) + " published " + addresses_[from].ip);
    }
    const Digest welcome = proof(options_.secret, "welcome", from, me_, in.nonce, connector_nonce);
    if (!send_now(in.socket.fd(), as_text(welcome))) return refuse(in, "could not be answered");
    sockets_[from] = std::move(in.socket);
  }

  void refuse(Incoming& in, const std::string& why) {
    log_line(LogLevel::Info, me_, "sockets: refused a connection from " + in.from + ": " + why);
    in.socket = Socket();
  }

  std::string missing_ranks() const {
    std::string text;
    for (const auto& out : outgoing_) {
      if (out.stage == Stage::Done) continue;
      text += (text.empty() ? "" : "; ") + connect_failure(out, out.last_error);
    }
    std::string silent;
    for (int peer = 0; peer < me_; ++peer) {
      if (!linked_[peer] || sockets_[peer].valid()) continue;
      silent += (silent.empty() ? "" : ", ") + addresses_[peer].named(peer) + " at " +
                addresses_[peer].ip;
    }
    if (!silent.empty()) {
      text += (text.empty() ? "" : "; ") + addresses_[me_].named(me_) + " at " +
              addresses_[me_].text() + " had no connection from " + silent;
    }
    return text + " within " + seconds(options_.timeout_s) +
           " (COLL_SOCKET_IFNAME chooses the interface the ranks listen on)";
  }

  int me_;
  const std::vector<bool>& linked_;
  const RendezvousOptions& options_;
  Socket listener_;
  std::vector<PeerAddress> addresses_;  // by rank
  std::vector<Socket> sockets_;         // by rank, once linked
  std::vector<Outgoing> outgoing_;      // to higher ranks
  std::vector<Incoming> pending_;       // accepted, not yet proven
};

}  // namespace

std::vector<Socket> connect_linked_ranks(Bootstrap& bootstrap, const std::vector<bool>& linked,
                                         const RendezvousOptions& options) {
  return Rendezvous(bootstrap, linked, options).run();
}

}  // namespace coll
