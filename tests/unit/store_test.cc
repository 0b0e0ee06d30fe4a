// The bootstrap store: wire format, token check, blocking gets, counters and aborts.
#include <gtest/gtest.h>

#include <thread>

#include "bootstrap/socket.hpp"
#include "bootstrap/store_client.hpp"
#include "bootstrap/store_server.hpp"
#include "bootstrap/store_wire.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

TEST(StoreWire, RoundTripsBinaryKeysAndValues) {
  store::Decoder decoder;
  const std::string value("\0\x01\xff binary", 10);
  const std::string frame =
      store::encode({store::Op::Set, "key\n", value}) + store::encode({store::Op::Get, "", ""});
  decoder.feed(frame.data(), 7);  // partial frames wait for the rest
  EXPECT_FALSE(decoder.next());
  decoder.feed(frame.data() + 7, frame.size() - 7);
  const auto first = decoder.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->op, store::Op::Set);
  EXPECT_EQ(first->key, "key\n");
  EXPECT_EQ(first->value, value);
  const auto second = decoder.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->op, store::Op::Get);
  EXPECT_FALSE(decoder.next());
}

TEST(StoreWire, RejectsMalformedFrames) {
  const std::string huge("\x7f\xff\xff\xff", 4);
  const std::string short_body("\0\0\0\x02SS", 6);
  std::string bad_op = store::encode({store::Op::Set, "k", "v"});
  bad_op[4] = '?';
  std::string bad_key_length = store::encode({store::Op::Set, "k", "v"});
  bad_key_length[8] = 9;
  for (const auto& frame : {huge, short_body, bad_op, bad_key_length}) {
    store::Decoder decoder;
    decoder.feed(frame.data(), frame.size());
    EXPECT_THROW(decoder.next(), Error);
  }
}

TEST(StoreServer, SetGetAddAcrossClients) {
  StoreServer server("127.0.0.1", 0, "secret");
  StoreClient a(server.address(), "secret", 0, 2, 5);
  StoreClient b(server.address(), "secret", 1, 2, 5);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    a.set("address/0", "here");
  });
  EXPECT_EQ(b.get("address/0", "rank 0"), "here");  // blocks until set
  later.join();
  EXPECT_EQ(a.add("counter", 2), 2);
  EXPECT_EQ(b.add("counter", 3), 5);
}

TEST(StoreServer, AddOnTextIsAnErrorAndTheStoreSurvives) {
  StoreServer server("127.0.0.1", 0, "secret", 1);
  StoreClient client(server.address(), "secret", 0, 1, 5);
  client.set("name", "not a number");
  try {
    client.add("name", 1);
    FAIL() << "ADD on a text value succeeded";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("is not a number"), std::string::npos) << error.what();
  }
  EXPECT_EQ(client.get("name", "name"), "not a number");
  EXPECT_EQ(client.add("counter", 7), 7);
}

TEST(StoreServer, RanksMustBeInRangeAndUnique) {
  StoreServer server("127.0.0.1", 0, "secret", 2);
  StoreClient first(server.address(), "secret", 0, 2, 5);
  const auto refused = [&](int rank, int size, const char* expected) {
    try {
      StoreClient client(server.address(), "secret", rank, size, 5);
      ADD_FAILURE() << "rank " << rank << " of " << size << " was accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
    }
  };
  refused(0, 2, "rank 0 is already connected");
  refused(-1, 2, "not within a job of size 2");
  refused(2, 2, "not within a job of size 2");
  refused(1, 3, "this store serves 2");
  StoreClient second(server.address(), "secret", 1, 2, 5);
  second.set("k", "v");
  EXPECT_EQ(first.get("k", "k"), "v");
}

TEST(StoreServer, RankIsFreeAgainOnceItsConnectionCloses) {
  StoreServer server("127.0.0.1", 0, "secret", 1);
  for (int communicator = 0; communicator < 20; ++communicator) {
    StoreClient client(server.address(), "secret", 0, 1, 5);  // closed at the end of the loop
    EXPECT_EQ(client.add("created", 1), communicator + 1);
  }
}

TEST(StoreServer, WrongTokenIsRefused) {
  StoreServer server("127.0.0.1", 0, "secret");
  try {
    StoreClient intruder(server.address(), "guess", 0, 1, 5);
    FAIL() << "accepted a wrong token";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("wrong job token"), std::string::npos);
  }
  StoreClient legit(server.address(), "secret", 0, 1, 5);  // the server survived it
  legit.set("k", "v");
  EXPECT_EQ(legit.get("k", "k"), "v");
}

TEST(StoreServer, GarbageFromAClientDoesNotHurtOthers) {
  StoreServer server("127.0.0.1", 0, "secret");
  const auto [host, port] = split_host_port(server.address(), "test");
  Socket rogue = Socket::connect(host, port, 5);
  rogue.send_all(std::string("\xff\xff\xff\xff garbage", 12));
  StoreClient legit(server.address(), "secret", 0, 1, 5);
  legit.set("k", "v");
  EXPECT_EQ(legit.get("k", "k"), "v");
}

TEST(StoreServer, GetTimesOutNamingWhatItWaitedFor) {
  StoreServer server("127.0.0.1", 0, "secret");
  StoreClient client(server.address(), "secret", 0, 1, 0.2);
  try {
    client.get("never", "rank 7 to join");
    FAIL();
  } catch (const Error& error) {
    EXPECT_EQ(error.status(), Status::Timeout);
    EXPECT_NE(std::string(error.what()).find("rank 7 to join"), std::string::npos);
  }
}

TEST(StoreServer, AbortReachesConnectedAndLateClients) {
  StoreServer server("127.0.0.1", 0, "secret");
  StoreClient early(server.address(), "secret", 0, 2, 5);
  server.abort_all("rank 3 was killed");
  const auto heard = [](StoreClient& client) {
    std::optional<std::string> reason;
    for (int i = 0; i < 200 && !reason; ++i) {
      reason = client.poll_abort();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return reason;
  };
  EXPECT_EQ(heard(early), std::optional<std::string>("rank 3 was killed"));
  // The abort follows the reply to the late client's hello, usually in the same read: it must be
  // heard even when no new bytes reach the socket, and every later request fails at once.
  StoreClient late(server.address(), "secret", 1, 2, 5);
  EXPECT_EQ(heard(late), std::optional<std::string>("rank 3 was killed"));
  const double asked = now_seconds();
  EXPECT_THROW(late.get("anything", "x"), Error);
  EXPECT_LT(now_seconds() - asked, 1);
}

TEST(SplitHostPort, RejectsMalformedAddresses) {
  EXPECT_EQ(split_host_port("127.0.0.1:80", "X").second, 80);
  for (const char* bad : {"", "host", "host:", ":80", "host:0", "host:99999", "host:8x"}) {
    EXPECT_THROW(split_host_port(bad, "COLL_STORE"), Error) << bad;
  }
}

}  // namespace
}  // namespace coll
