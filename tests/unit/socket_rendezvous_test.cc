// Only the job's ranks get in: while rank 1 waits for rank 0, strangers connect to its listener
// and send nothing, garbage, a proof under another secret, a proof replayed from another
// connection, and a flood of idle connections; each is closed within the handshake time and the
// real rank 0 still links, exactly. A rank that does not know the secret is refused by name.
#include "transport/socket_rendezvous.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/job_secret.hpp"
#include "bootstrap/store_server.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace {

using coll::Socket;

coll::NetworkInterface loopback() {
  coll::NetworkInterface interface;
  interface.name = "lo";
  interface.address = "127.0.0.1";
  return interface;
}

// Calls `before` with the published addresses once they are known, before this rank connects.
class InterceptingBootstrap final : public coll::Bootstrap {
 public:
  InterceptingBootstrap(std::unique_ptr<coll::Bootstrap> inner,
                        std::function<void(const std::vector<std::string>&)> before)
      : inner_(std::move(inner)), before_(std::move(before)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::vector<std::string> allgather(const std::string& name, const std::string& mine) override {
    auto all = inner_->allgather(name, mine);
    if (name == "sockets/address" && before_) before_(all);
    return all;
  }
  void barrier(const std::string& name) override { inner_->barrier(name); }
  std::string describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<coll::Bootstrap> inner_;
  std::function<void(const std::vector<std::string>&)> before_;
};

Socket connect_to(const std::string& published) {
  const auto address = published.substr(0, published.find(' '));
  const auto [host, port] = coll::split_host_port(address, "address");
  return Socket::connect(host, port, 5);
}

std::string read_exactly(int fd, std::size_t bytes) {
  std::string out(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::recv(fd, out.data() + got, bytes - got, 0);
    if (n <= 0) return out.substr(0, got);
    got += static_cast<std::size_t>(n);
  }
  return out;
}

std::string u32(std::uint32_t value) {
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return bytes;
}

// A hello from rank 0 to rank 1 proving `secret` against the challenge's nonce.
std::string hello(const std::string& secret, const std::string& challenge) {
  const std::string nonce(16, 'n');
  const std::string acceptor_nonce = challenge.substr(8);
  const auto digest = coll::hmac_sha256(secret, "hello" + u32(0) + u32(1) + acceptor_nonce + nonce);
  return u32(0) + u32(1) + nonce + std::string(digest.begin(), digest.end());
}

// True when the peer closes the connection within `seconds`.
bool closed_within(const Socket& socket, double seconds) {
  const double give_up = coll::now_seconds() + seconds;
  char byte;
  while (coll::now_seconds() < give_up) {
    pollfd fd{socket.fd(), POLLIN, 0};
    if (::poll(&fd, 1, 50) > 0) {
      const ssize_t n = ::recv(socket.fd(), &byte, 1, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
    }
  }
  return false;
}

TEST(SocketRendezvous, StrangersAreRefusedAndTheJobsRankStillLinks) {
  const std::string secret = "job secret";
  coll::StoreServer store("127.0.0.1", 0, "token");
  std::vector<Socket> strangers;
  std::vector<Socket> rank_one_sockets;
  std::thread rank_one([&] {
    auto bootstrap = coll::make_store_bootstrap(store.address(), "token", 1, 2, 20);
    rank_one_sockets =
        coll::connect_linked_ranks(*bootstrap, {true, false}, {loopback(), secret, 20, 1});
  });
  const auto attack = [&](const std::vector<std::string>& published) {
    const std::string& target = published[1];
    strangers.push_back(connect_to(target));  // silent
    Socket garbage = connect_to(target);
    read_exactly(garbage.fd(), 24);
    ASSERT_EQ(::send(garbage.fd(), std::string(56, 'x').data(), 56, 0), 56);
    strangers.push_back(std::move(garbage));
    Socket wrong_secret = connect_to(target);
    const std::string hello_other = hello("another secret", read_exactly(wrong_secret.fd(), 24));
    ::send(wrong_secret.fd(), hello_other.data(), hello_other.size(), 0);
    strangers.push_back(std::move(wrong_secret));
    // A proof recorded from one connection, replayed on another: its nonce is not the new one's.
    Socket recorded = connect_to(target);
    const std::string proof = hello(secret, read_exactly(recorded.fd(), 24));
    Socket replay = connect_to(target);
    read_exactly(replay.fd(), 24);
    ::send(replay.fd(), proof.data(), proof.size(), 0);
    strangers.push_back(std::move(replay));
    strangers.push_back(std::move(recorded));
    for (int i = 0; i < 200; ++i) strangers.push_back(connect_to(target));
  };
  auto bootstrap = std::make_unique<InterceptingBootstrap>(
      coll::make_store_bootstrap(store.address(), "token", 0, 2, 20), attack);
  const auto mine =
      coll::connect_linked_ranks(*bootstrap, {false, true}, {loopback(), secret, 20, 1});
  rank_one.join();
  ASSERT_TRUE(mine[1].valid());
  ASSERT_TRUE(rank_one_sockets[0].valid());
  const std::uint32_t sent = 0xC0FFEE;
  ASSERT_EQ(::send(mine[1].fd(), &sent, 4, 0), 4);
  std::uint32_t received = 0;
  ASSERT_EQ(::recv(rank_one_sockets[0].fd(), &received, 4, MSG_WAITALL), 4);
  EXPECT_EQ(received, sent);
  for (std::size_t i = 0; i < strangers.size(); ++i) {
    EXPECT_TRUE(closed_within(strangers[i], 2)) << "stranger " << i << " was not closed";
  }
}

TEST(SocketRendezvous, ARankWithAnotherSecretIsRefusedByName) {
  coll::StoreServer store("127.0.0.1", 0, "token");
  std::string one_error;
  std::thread rank_one([&] {
    auto bootstrap = coll::make_store_bootstrap(store.address(), "token", 1, 2, 20);
    try {
      coll::connect_linked_ranks(*bootstrap, {true, false}, {loopback(), "secret", 1, 0.5});
    } catch (const coll::Error& error) {
      one_error = error.what();
    }
  });
  auto bootstrap = coll::make_store_bootstrap(store.address(), "token", 0, 2, 20);
  try {
    coll::connect_linked_ranks(*bootstrap, {false, true}, {loopback(), "other", 1, 0.5});
    ADD_FAILURE() << "expected an error";
  } catch (const coll::Error& error) {
    EXPECT_NE(std::string(error.what()).find("rank 0 ("), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("cannot link to rank 1 ("), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("do not share the job's secret"), std::string::npos)
        << error.what();
  }
  rank_one.join();
  EXPECT_NE(one_error.find("had no connection from rank 0 ("), std::string::npos) << one_error;
}

}  // namespace
