// The store's request semantics without sockets: every hello answers the connection's challenge
// with a proof of the token, every request is validated, and a bad one is answered with an
// error instead of throwing.
#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <vector>

#include "bootstrap/store_service.hpp"

namespace coll::store {
namespace {

class ServiceTest : public ::testing::Test {
 protected:
  // Sends one request and returns what the connection was answered (the frames decoded).
  std::vector<Message> request(ConnectionId from, Op op, const std::string& key,
                               const std::string& value) {
    sent_.clear();
    dropped_ = service_.handle(from, {op, key, value});
    Decoder decoder;
    std::vector<Message> replies;
    for (const auto& [to, frame] : sent_) {
      EXPECT_EQ(to, from);
      decoder.feed(frame.data(), frame.size());
      while (auto message = decoder.next()) replies.push_back(*message);
    }
    return replies;
  }
  // Connects `from` and returns the proof its hello carries for `rank` under `token`.
  std::string proof(ConnectionId from, const std::string& rank,
                    const std::string& token = "token") {
    sent_.clear();
    service_.connected(from);
    Decoder decoder;
    decoder.feed(sent_.at(0).second.data(), sent_.at(0).second.size());
    const Message challenge = *decoder.next();
    EXPECT_EQ(challenge.op, Op::Challenge);
    challenges_[from] = challenge.value;
    return hello_key(token, challenge.value, rank);
  }
  bool hello(ConnectionId from, const std::string& rank) {
    const std::string proven = proof(from, rank);
    const auto replies = request(from, Op::Hello, proven, rank);
    return !dropped_ && replies.size() == 1 && replies[0].op == Op::Reply;
  }
  // The single reply's op and text.
  std::pair<Op, std::string> answer(ConnectionId from, Op op, const std::string& key,
                                    const std::string& value) {
    const auto replies = request(from, op, key, value);
    EXPECT_EQ(replies.size(), 1u);
    return replies.empty() ? std::pair{Op::Hello, std::string()}
                           : std::pair{replies[0].op, replies[0].value};
  }

  std::vector<std::pair<ConnectionId, std::string>> sent_;
  std::map<ConnectionId, std::string> challenges_;
  std::optional<std::string> dropped_;
  ServiceLimits limits_{.key_bytes = 64, .stored_bytes = 1000, .waits_per_connection = 2};
  Service service_{"token", 4, limits_,
                   [this](ConnectionId to, std::string frame) { sent_.emplace_back(to, frame); }};
};

TEST_F(ServiceTest, HelloNeedsTheTokenAndAFreeRankInRange) {
  for (const char* bad : {"", "1", "x/4", "1/x", "-1/4", "4/4", "1/5", "1/0", " 1/4", "1/4 ",
                          "+1/4", "99999999999999999999/4", "1/4/4"}) {
    EXPECT_FALSE(hello(1, bad)) << bad;
    EXPECT_TRUE(dropped_) << bad;
    service_.disconnect(1);
  }
  std::string wrong = proof(1, "1/4", "tokem");
  EXPECT_EQ(request(1, Op::Hello, wrong, "1/4")[0].value,
            "store refused the connection: wrong job token (COLL_TOKEN)");
  service_.disconnect(1);
  EXPECT_TRUE(request(1, Op::Set, "k", "v")[0].op == Op::Error) << "a request before the hello";
  service_.disconnect(1);

  ASSERT_TRUE(hello(1, "1/4"));
  EXPECT_FALSE(hello(2, "1/4"));
  std::string taken = proof(3, "1/4");
  EXPECT_NE(request(3, Op::Hello, taken, "1/4")[0].value.find("rank 1 is already connected"),
            std::string::npos);
  service_.disconnect(1);  // the rank is free again once its connection is gone
  EXPECT_TRUE(hello(4, "1/4"));
}

TEST(Service, FirstHelloFixesAnUnknownJobSize) {
  std::map<ConnectionId, std::string> challenge;
  Service service("token", 0, {}, [&](ConnectionId to, std::string frame) {
    Decoder decoder;
    decoder.feed(frame.data(), frame.size());
    if (auto message = decoder.next(); message && message->op == Op::Challenge)
      challenge[to] = message->value;
  });
  const auto hello = [&](ConnectionId from, const std::string& rank) {
    service.connected(from);
    return service.handle(from, {Op::Hello, hello_key("token", challenge[from], rank), rank});
  };
  EXPECT_FALSE(hello(1, "2/3"));
  EXPECT_TRUE(hello(2, "1/4"));
  EXPECT_FALSE(hello(3, "0/3"));
  EXPECT_EQ(service.describe(3), "rank 0");
  EXPECT_EQ(service.describe(2), "an unauthenticated client");
}

TEST_F(ServiceTest, AddRefusesNonNumbersAndOverflowLeavingTheValue) {
  ASSERT_TRUE(hello(1, "0/4"));
  request(1, Op::Set, "text", "abc");
  EXPECT_EQ(answer(1, Op::Add, "text", "1").first, Op::Error);
  EXPECT_EQ(answer(1, Op::Get, "text", ""), std::pair(Op::Reply, std::string("abc")));
  for (const char* delta : {"", "1x", " 1", "+1", "0x10", "1e3", "99999999999999999999"}) {
    EXPECT_EQ(answer(1, Op::Add, "n", delta).first, Op::Error) << delta;
  }
  const std::string max = std::to_string(LLONG_MAX);
  EXPECT_EQ(answer(1, Op::Add, "n", max), std::pair(Op::Reply, max));
  const auto overflow = answer(1, Op::Add, "n", "1");
  EXPECT_EQ(overflow.first, Op::Error);
  EXPECT_NE(overflow.second.find("overflows"), std::string::npos) << overflow.second;
  EXPECT_EQ(answer(1, Op::Add, "n", "0"), std::pair(Op::Reply, max));
  EXPECT_EQ(answer(1, Op::Add, "m", std::to_string(LLONG_MIN)).first, Op::Reply);
  EXPECT_EQ(answer(1, Op::Add, "m", "-1").first, Op::Error);
  EXPECT_FALSE(dropped_) << "a refused ADD keeps the connection";
}

TEST_F(ServiceTest, AddWakesAGetWaitingForTheCounter) {
  ASSERT_TRUE(hello(1, "0/4"));
  ASSERT_TRUE(hello(2, "1/4"));
  EXPECT_TRUE(request(1, Op::Get, "counter", "").empty());
  sent_.clear();
  service_.handle(2, {Op::Add, "counter", "5"});
  ASSERT_EQ(sent_.size(), 2u);
  EXPECT_EQ(sent_[0].first, 1u);  // the waiting GET, then the ADD's own answer
}

TEST_F(ServiceTest, LimitsDropTheClientThatExceedsThem) {
  ASSERT_TRUE(hello(1, "0/4"));
  EXPECT_EQ(answer(1, Op::Get, std::string(65, 'k'), "").first, Op::Error);
  EXPECT_TRUE(dropped_);
  EXPECT_FALSE(service_.handle(1, {Op::Set, "a", std::string(900, 'v')}));
  EXPECT_EQ(answer(1, Op::Set, "b", std::string(200, 'v')).first, Op::Error);  // store is full
  EXPECT_TRUE(dropped_);
  EXPECT_FALSE(service_.handle(1, {Op::Set, "a", std::string(990, 'v')})) << "replacing fits";
  request(1, Op::Get, "never1", "");
  request(1, Op::Get, "never2", "");
  EXPECT_FALSE(dropped_);
  EXPECT_EQ(answer(1, Op::Get, "never3", "").first, Op::Error);  // a third waiting GET
  EXPECT_TRUE(dropped_);
}

TEST_F(ServiceTest, ClientsMayNotSendServerMessages) {
  ASSERT_TRUE(hello(1, "0/4"));
  for (Op op : {Op::Hello, Op::Reply, Op::Error, Op::Abort}) {
    EXPECT_EQ(answer(1, op, "", "").first, Op::Error);
    EXPECT_TRUE(dropped_);
  }
}

TEST_F(ServiceTest, AbortReachesAuthenticatedAndLaterClientsOnly) {
  ASSERT_TRUE(hello(1, "0/4"));
  sent_.clear();
  service_.abort("rank 2 died");
  ASSERT_EQ(sent_.size(), 1u);
  EXPECT_EQ(sent_[0].first, 1u);
  const std::string proven = proof(2, "1/4");
  const auto replies = request(2, Op::Hello, proven, "1/4");
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[1].op, Op::Abort);
  EXPECT_EQ(replies[1].value, "rank 2 died");
}

TEST_F(ServiceTest, ARanksFailReachesEveryRankAndTheFirstReasonStays) {
  ASSERT_TRUE(hello(1, "0/4"));
  ASSERT_TRUE(hello(2, "1/4"));
  sent_.clear();
  EXPECT_FALSE(service_.handle(2, {Op::Fail, "", "rank 0 called barrier but rank 1 called x"}));
  ASSERT_EQ(sent_.size(), 2u);  // to both connections, the sender included
  service_.abort("rank 1 exited with status 1");
  const std::string proven = proof(3, "2/4");
  const auto replies = request(3, Op::Hello, proven, "2/4");
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[1].op, Op::Abort);
  EXPECT_EQ(replies[1].value, "rank 0 called barrier but rank 1 called x");
}

TEST_F(ServiceTest, AFailFromAnUnauthenticatedClientIsRefused) {
  EXPECT_EQ(answer(1, Op::Fail, "", "stop").first, Op::Error);
  EXPECT_TRUE(dropped_);
  ASSERT_TRUE(hello(2, "0/4"));
  EXPECT_EQ(request(2, Op::Get, "missing", "").size(), 0u);  // no abort was pushed
}

// A proof answers one connection's challenge only: recorded and replayed on another connection
// (or sent before any challenge) it is refused; the welcome proves that the store knows the token.
TEST_F(ServiceTest, AHelloProofIsGoodForItsOwnChallengeOnly) {
  const std::string recorded = proof(1, "0/4");
  const auto replies = request(1, Op::Hello, recorded, "0/4");
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].value, welcome_proof("token", challenges_[1], recorded, "0/4"));
  service_.disconnect(1);
  proof(2, "0/4");
  EXPECT_EQ(request(2, Op::Hello, recorded, "0/4")[0].value,
            "store refused the connection: wrong job token (COLL_TOKEN)");
  EXPECT_EQ(service_.handle(3, {Op::Hello, recorded, "0/4"}).value_or(""),
            "refused: wrong job token (COLL_TOKEN)");
}

TEST_F(ServiceTest, ValuesAreReadableBySetKey) {
  ASSERT_TRUE(hello(1, "0/4"));
  EXPECT_FALSE(service_.value("wait/0"));
  request(1, Op::Set, "wait/0", "2 receiving from");
  EXPECT_EQ(service_.value("wait/0").value_or(""), "2 receiving from");
}

}  // namespace
}  // namespace coll::store
