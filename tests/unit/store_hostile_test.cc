// Hostile clients of the store: oversized frames before the hello, clients that never read
// their replies, and clients that together hold too much. The job's own clients keep working.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <optional>
#include <thread>
#include <vector>

#include "bootstrap/socket.hpp"
#include "bootstrap/store_client.hpp"
#include "bootstrap/store_server.hpp"
#include "bootstrap/store_wire.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

Socket connect_to(const StoreServer& server) {
  const auto [host, port] = split_host_port(server.address(), "test");
  return Socket::connect(host, port, 5);
}

// The next frame the store sends on `socket`.
store::Message next_frame(const Socket& socket, store::Decoder& decoder) {
  char byte;
  while (true) {
    if (auto message = decoder.next()) return *message;
    if (::recv(socket.fd(), &byte, 1, 0) <= 0) {
      throw Error(Status::RemoteError, "the store hung up on the hello");
    }
    decoder.feed(&byte, 1);
  }
}

// Joins as `rank` and reads the welcome; afterwards the test never reads again.
Socket join(const StoreServer& server, int rank, int size) {
  Socket socket = connect_to(server);
  store::Decoder decoder;
  const store::Message challenge = next_frame(socket, decoder);
  EXPECT_EQ(challenge.op, store::Op::Challenge);
  const std::string rank_size = std::to_string(rank) + "/" + std::to_string(size);
  socket.send_all(store::encode(
      {store::Op::Hello, store::hello_key(server.token(), challenge.value, rank_size), rank_size}));
  EXPECT_EQ(next_frame(socket, decoder).op, store::Op::Reply);
  return socket;
}

// True once the server closed the connection (within_s seconds at most).
bool hung_up(const Socket& socket, double within_s) {
  pollfd fd{socket.fd(), POLLRDHUP, 0};
  return ::poll(&fd, 1, static_cast<int>(within_s * 1000)) == 1 &&
         (fd.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

std::string gets(const std::string& key, int count) {
  std::string requests;
  for (int i = 0; i < count; ++i) requests += store::encode({store::Op::Get, key, ""});
  return requests;
}

TEST(StoreHostile, OversizedFrameBeforeTheHelloIsDroppedAtOnce) {
  StoreServer server("127.0.0.1", 0, "secret", 1);
  std::vector<Socket> strangers;
  for (const char* header : {"\x00\x00\x01\x01", "\x00\x10\x00\x00", "\x7f\xff\xff\xff"}) {
    strangers.push_back(connect_to(server));
    strangers.back().send_all(std::string(header, 4));
  }
  for (const auto& stranger : strangers) EXPECT_TRUE(hung_up(stranger, 2));
  StoreClient legit(server.address(), "secret", 0, 1, 5);
  legit.set("k", "v");
  EXPECT_EQ(legit.get("k", "k"), "v");
}

TEST(StoreHostile, ClientThatNeverReadsIsDroppedAndOthersHearTheAbort) {
  StoreServer server("127.0.0.1", 0, "secret", 2);
  Socket hog = join(server, 0, 2);
  hog.send_all(store::encode({store::Op::Set, "big", std::string(1u << 20, 'x')}) +
               gets("big", 64));
  StoreClient legit(server.address(), "secret", 1, 2, 5);
  legit.set("k", "v");
  EXPECT_EQ(legit.get("k", "k"), "v");
  EXPECT_TRUE(hung_up(hog, 5));
  server.abort_all("rank 0 is stuck");
  std::optional<std::string> reason;
  const Deadline deadline(5);
  while (!reason && !deadline.expired()) {
    reason = legit.poll_abort();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(reason.value_or("no abort"), "rank 0 is stuck");
}

TEST(StoreHostile, ConnectionsTogetherOverTheLimitLoseTheLargest) {
  StoreLimits limits;
  limits.connection_bytes = 16u << 20;
  limits.all_connections_bytes = 20u << 20;
  StoreServer server("127.0.0.1", 0, "secret", 4, limits);
  StoreClient legit(server.address(), "secret", 3, 4, 5);
  legit.set("big", std::string(1u << 20, 'x'));
  std::vector<Socket> hogs;
  for (int rank = 0; rank < 3; ++rank) {
    hogs.push_back(join(server, rank, 4));
    hogs.back().send_all(gets("big", 12));  // 12 MiB of replies, never read
  }
  EXPECT_EQ(legit.get("big", "big").size(), 1u << 20);
  int dropped = 0;
  for (const auto& hog : hogs) dropped += hung_up(hog, 1) ? 1 : 0;
  EXPECT_GE(dropped, 1);
  EXPECT_LT(dropped, 3) << "only the largest holders are dropped";
  EXPECT_EQ(legit.add("n", 1), 1);
}

}  // namespace
}  // namespace coll
