// The shaped transport emulates links. On the real clock a shaped link is never faster than its
// set rate and never delivers before its latency alpha, a node's NIC and staging path and a
// rank's port are shared: lower bounds on the time, which a loaded machine can only lengthen, so
// they hold whatever the load. That the links are not slower than set is proven on the virtual
// clock, where the same links take their exact time whatever this machine does, and a message's
// alpha is work at both of its ends, one message at a time. The shape's text form is checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "coll/error.hpp"
#include "emulator/cluster_clock.hpp"
#include "shaped_transport.hpp"
#include "transport/inproc_transport.hpp"

namespace {

// Timing from the test's own clock reads around a stream can round a shaped time down a little.
constexpr double kNeverFaster = 1.01;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Ranks of one in-process world, each behind a shaped transport, on the nodes given.
std::vector<std::unique_ptr<coll::Transport>> shaped_world(const coll::LinkShape& shape,
                                                           const std::vector<int>& node_of_rank) {
  const auto world = coll::InprocWorld::create(static_cast<int>(node_of_rank.size()));
  const int nodes = *std::max_element(node_of_rank.begin(), node_of_rank.end()) + 1;
  const auto buckets =
      coll::shaped_job_in_process(shape, nodes, static_cast<int>(node_of_rank.size()));
  coll::TransportOptions options;
  options.timeout_s = 30;
  std::vector<std::unique_ptr<coll::Transport>> ranks;
  for (int rank = 0; rank < static_cast<int>(node_of_rank.size()); ++rank) {
    ranks.push_back(coll::make_shaped_transport(world->make_transport(rank, options), shape, rank,
                                                node_of_rank, buckets, nullptr, options));
  }
  return ranks;
}

// Sends `total` bytes in `message` pieces over every (from, to) pair of `pairs` at once; returns,
// per pair, the seconds from the first send until its last piece arrived (thread start-up, slow
// on a loaded machine, is left out).
std::vector<double> stream_each(std::vector<std::unique_ptr<coll::Transport>>& ranks,
                                const std::vector<std::pair<int, int>>& pairs, std::size_t total,
                                std::size_t message) {
  const std::size_t pieces = total / message;
  std::vector<std::vector<std::byte>> sent(pairs.size(), std::vector<std::byte>(total)),
      received(pairs.size(), std::vector<std::byte>(total));
  std::vector<std::thread> threads;
  std::vector<std::chrono::steady_clock::time_point> started(pairs.size()), arrived(pairs.size());
  for (std::size_t p = 0; p < pairs.size(); ++p) {
    threads.emplace_back([&, p] {
      auto& sender = *ranks[static_cast<std::size_t>(pairs[p].first)];
      std::vector<coll::Transport::Request> requests;
      started[p] = std::chrono::steady_clock::now();
      for (std::size_t i = 0; i < pieces; ++i) {
        requests.push_back(sender.send(pairs[p].second, i, sent[p].data() + i * message, message));
      }
      sender.wait_all(requests);
    });
    threads.emplace_back([&, p] {
      auto& receiver = *ranks[static_cast<std::size_t>(pairs[p].second)];
      std::vector<coll::Transport::Request> requests;
      for (std::size_t i = 0; i < pieces; ++i) {
        requests.push_back(
            receiver.recv(pairs[p].first, i, received[p].data() + i * message, message));
      }
      receiver.wait_all(requests);
      arrived[p] = std::chrono::steady_clock::now();
    });
  }
  for (auto& thread : threads) thread.join();
  const auto first = *std::min_element(started.begin(), started.end());
  std::vector<double> seconds;
  for (const auto& at : arrived)
    seconds.push_back(std::chrono::duration<double>(at - first).count());
  return seconds;
}

// The same: the seconds until the last piece of any pair arrived.
double stream(std::vector<std::unique_ptr<coll::Transport>>& ranks,
              const std::vector<std::pair<int, int>>& pairs, std::size_t total,
              std::size_t message) {
  const auto seconds = stream_each(ranks, pairs, total, message);
  return *std::max_element(seconds.begin(), seconds.end());
}

TEST(ShapedTransport, IntraLinkCarriesItsSetRate) {
  coll::LinkShape shape;
  shape.intra = {0, 1 / 8e6};  // 8 MB/s: 8 MiB take 1 s
  auto ranks = shaped_world(shape, {0, 0});
  constexpr std::size_t kTotal = 8u << 20;
  const double elapsed = stream(ranks, {{0, 1}}, kTotal, 64u << 10);
  const double rate = kTotal / elapsed;
  EXPECT_LE(rate, kNeverFaster * 8e6) << "achieved " << rate / 1e6 << " MB/s in " << elapsed;
}

TEST(ShapedTransport, TimeScaleSlowsTheLinkByK) {
  coll::LinkShape shape;
  shape.intra = {0, 1 / 80e6};  // 80 MB/s, slowed 10 times: 8 MB/s
  shape.time_scale = 10;
  auto ranks = shaped_world(shape, {0, 0});
  constexpr std::size_t kTotal = 8u << 20;
  const double rate = kTotal / stream(ranks, {{0, 1}}, kTotal, 256u << 10);
  EXPECT_LE(rate, kNeverFaster * 8e6) << "achieved " << rate / 1e6 << " MB/s";
}

TEST(ShapedTransport, RanksOfOneNodeShareItsNic) {
  coll::LinkShape shape;
  shape.inter = {0, 1 / 8e6};
  auto ranks = shaped_world(shape, {0, 0, 1, 1});
  constexpr std::size_t kTotal = 4u << 20;  // from each of two ranks: 8 MiB through one NIC
  const double rate = 2 * kTotal / stream(ranks, {{0, 2}, {1, 3}}, kTotal, 64u << 10);
  EXPECT_LE(rate, kNeverFaster * 8e6) << "achieved " << rate / 1e6 << " MB/s for the node";
}

TEST(ShapedTransport, StagingPathLimitsANodesConcurrentCopies) {
  coll::LinkShape shape;
  shape.intra = {0, 1 / 16e6};              // each link 16 MB/s alone
  shape.staging_beta_s_per_byte = 1 / 8e6;  // the node's staging path: 8 MB/s for all
  auto ranks = shaped_world(shape, {0, 0, 0, 0});
  constexpr std::size_t kTotal = 4u << 20;
  const double rate = 2 * kTotal / stream(ranks, {{0, 1}, {2, 3}}, kTotal, 64u << 10);
  EXPECT_LE(rate, kNeverFaster * 8e6) << "achieved " << rate / 1e6 << " MB/s for the node";
}

TEST(ShapedTransport, ARankReceivingFromThreePeersTakesThemInTurn) {
  coll::LinkShape shape;
  shape.intra = {0, 1 / 8e6};  // every port 8 MB/s in each direction
  auto ranks = shaped_world(shape, {0, 0, 0, 0});
  constexpr std::size_t kTotal = 3u << 20;  // from each of three ranks: 9 MiB into rank 0's port
  const double rate = 3 * kTotal / stream(ranks, {{1, 0}, {2, 0}, {3, 0}}, kTotal, 64u << 10);
  EXPECT_LE(rate, kNeverFaster * 8e6) << "achieved " << rate / 1e6 << " MB/s into one rank";
}

TEST(ShapedTransport, PeersSendingToOneRankShareItsPort) {
  // Each of three ranks sends a burst of 16 pieces at once: a real port shares its bandwidth
  // among the flows, so no burst ends before most of all three have passed (in the order sent,
  // the first would end after a third of that time).
  coll::LinkShape shape;
  shape.intra = {0, 1 / 8e6};
  auto ranks = shaped_world(shape, {0, 0, 0, 0});
  const auto seconds = stream_each(ranks, {{1, 0}, {2, 0}, {3, 0}}, 1u << 20, 64u << 10);
  const double all_three_s = 3.0 * (1u << 20) / 8e6;
  EXPECT_GE(*std::min_element(seconds.begin(), seconds.end()), 0.8 * all_three_s);
}

TEST(ShapedTransport, EveryMessageTakesAlpha) {
  coll::LinkShape shape;
  constexpr double kAlpha = 0.02;  // never less one way (a missing alpha fails)
  shape.inter = {kAlpha, 0};
  auto ranks = shaped_world(shape, {0, 1});
  constexpr int kRoundTrips = 4;
  std::thread echo([&] {
    for (int i = 0; i < kRoundTrips; ++i) {
      int value = 0;
      auto in = ranks[1]->recv(0, 1, &value, sizeof value);
      ranks[1]->wait(in);
      auto out = ranks[1]->send(0, 2, &value, sizeof value);
      ranks[1]->wait(out);
    }
  });
  std::vector<double> one_way;
  for (int i = 0; i < kRoundTrips; ++i) {
    const auto start = std::chrono::steady_clock::now();
    int value = i, back = -1;
    auto out = ranks[0]->send(1, 1, &value, sizeof value);
    auto in = ranks[0]->recv(1, 2, &back, sizeof back);
    std::vector<coll::Transport::Request> both{out, in};
    ranks[0]->wait_all(both);
    EXPECT_EQ(back, i);
    one_way.push_back(seconds_since(start) / 2);
  }
  echo.join();
  std::sort(one_way.begin(), one_way.end());
  const double median = one_way[one_way.size() / 2];
  EXPECT_GE(median, kAlpha) << "one-way " << median * 1e3 << " ms";
}

TEST(ShapedTransport, ARankSendingToThreePeersDoesItsWorkOnEachInTurn) {
  // Alpha is the sender's (and the receiver's) work on each message, one message at a time: three
  // small messages to three peers arrive no sooner than alpha, 2 alpha and 3 alpha after they
  // were sent (the exact times: ShapedTransportVirtualClock.AMessagesAlphaIsWorkAtBothOfItsEnds).
  constexpr double kAlpha = 0.02;
  coll::LinkShape shape;
  shape.intra = {kAlpha, 0};
  auto ranks = shaped_world(shape, {0, 0, 0, 0});
  const auto start = std::chrono::steady_clock::now();
  int value = 1;
  std::vector<int> in(4);
  std::vector<double> arrived(4);
  std::vector<std::thread> receivers;
  for (int to = 1; to < 4; ++to) {
    receivers.emplace_back([&, to] {
      auto& rank = *ranks[static_cast<std::size_t>(to)];
      auto request = rank.recv(0, 1, &in[static_cast<std::size_t>(to)], sizeof(int));
      rank.wait(request);
      arrived[static_cast<std::size_t>(to)] = seconds_since(start);
    });
  }
  std::vector<coll::Transport::Request> sends;
  for (int to = 1; to < 4; ++to) sends.push_back(ranks[0]->send(to, 1, &value, sizeof value));
  ranks[0]->wait_all(sends);
  for (auto& thread : receivers) thread.join();
  for (int to = 1; to < 4; ++to) {
    EXPECT_GE(arrived[static_cast<std::size_t>(to)], to * kAlpha) << "to rank " << to;
  }
}

TEST(LinkShape, ParsesItsOwnTextAndRejectsBadParts) {
  const auto shape = coll::LinkShape::parse(
      "intra=7e-06:9.4e-11,inter=7.4e-06:1.93e-10,staging=3.32e-11,scale=20", "COLL_SHAPE");
  EXPECT_DOUBLE_EQ(shape.intra.alpha_s, 7e-6);
  EXPECT_DOUBLE_EQ(shape.inter.beta_s_per_byte, 1.93e-10);
  EXPECT_DOUBLE_EQ(shape.staging_beta_s_per_byte, 3.32e-11);
  EXPECT_DOUBLE_EQ(shape.time_scale, 20);
  EXPECT_EQ(coll::LinkShape::parse(shape.to_string(), "again").to_string(), shape.to_string());
  EXPECT_FALSE(shape.virtual_clock);
  const auto on_virtual = coll::LinkShape::parse("intra=1:2,inter=1:2,clock=virtual", "COLL_SHAPE");
  EXPECT_TRUE(on_virtual.virtual_clock);
  EXPECT_TRUE(coll::LinkShape::parse(on_virtual.to_string(), "again").virtual_clock);
  const auto reducing =
      coll::LinkShape::parse("intra=1:2,inter=1:2,clock=virtual,reduce=8.7e-12", "COLL_SHAPE");
  EXPECT_DOUBLE_EQ(reducing.reduce_s_per_byte, 8.7e-12);
  EXPECT_DOUBLE_EQ(coll::LinkShape::parse(reducing.to_string(), "again").reduce_s_per_byte,
                   8.7e-12);
  for (const char* bad :
       {"intra=1:2", "intra=1:2,inter=x:1", "intra=1,inter=1:2", "intra=1:2,inter=1:2,scale=0.5",
        "intra=1:2,inter=1:2,speed=3", "intra=1:2,inter=1:2,clock=fast",
        "intra=1:2,inter=1:2,reduce=1e-12", "intra=1:2,inter=1:2,clock=virtual,reduce=-1"}) {
    try {
      coll::LinkShape::parse(bad, "COLL_SHAPE");
      ADD_FAILURE() << "accepted " << bad;
    } catch (const coll::Error& error) {
      EXPECT_EQ(error.status(), coll::Status::InvalidArgument);
      EXPECT_NE(std::string(error.what()).find("COLL_SHAPE"), std::string::npos) << error.what();
    }
  }
}

}  // namespace

// On the virtual clock (clock=virtual) a link's time is exact whatever this machine's speed:
// the receiving thread's virtual time moves on by what the link takes, to the nanosecond.
coll::LinkShape on_virtual_clock(coll::LinkShape shape) {
  shape.virtual_clock = true;
  return shape;
}

// Runs `receive` on a thread of its own (a fresh virtual clock at 0) and returns its virtual
// time at the end.
double virtual_seconds_after(const std::function<void()>& receive) {
  double seconds = -1;
  std::thread thread([&] {
    receive();
    seconds = coll::cluster_clock::now();
  });
  thread.join();
  return seconds;
}

TEST(ShapedTransportVirtualClock, ALinkTakesExactlyItsSetTime) {
  coll::LinkShape shape;
  // 8 MB/s: 8 MiB in 64 KiB pieces take 1.048576 s; each piece's alpha, the ranks' work on it,
  // overlaps the bytes of the one before, so only the first one's shows.
  shape.intra = {0.5e-3, 1 / 8e6};
  auto ranks = shaped_world(on_virtual_clock(shape), {0, 0});
  ASSERT_TRUE(coll::cluster_clock::is_virtual());
  constexpr std::size_t kTotal = 8u << 20, kPiece = 64u << 10;
  std::vector<std::byte> sent(kTotal), received(kTotal);
  std::thread sender([&] {
    std::vector<coll::Transport::Request> requests;
    for (std::size_t i = 0; i < kTotal / kPiece; ++i) {
      requests.push_back(ranks[0]->send(1, i, sent.data() + i * kPiece, kPiece));
    }
    ranks[0]->wait_all(requests);
  });
  const double arrived = virtual_seconds_after([&] {
    std::vector<coll::Transport::Request> requests;
    for (std::size_t i = 0; i < kTotal / kPiece; ++i) {
      requests.push_back(ranks[1]->recv(0, i, received.data() + i * kPiece, kPiece));
    }
    ranks[1]->wait_all(requests);
  });
  sender.join();
  EXPECT_NEAR(arrived, kTotal / 8e6 + 0.5e-3, 1e-6);
}

TEST(ShapedTransportVirtualClock, EachMessageKeepsItsOwnArrivalWhateverTheOrderOfReceives) {
  coll::LinkShape shape;
  shape.inter = {1e-3, 1e-6};  // 1 ms plus 1 us a byte
  auto ranks = shaped_world(on_virtual_clock(shape), {0, 1});
  std::vector<std::byte> big(1000), small(10), big_in(1000), small_in(10);
  std::thread sender([&] {
    // The big one arrives at 1 ms + 1 ms; the small one 10 us later: its 1 ms of work overlapped
    // the big one's bytes.
    std::vector<coll::Transport::Request> sends{ranks[0]->send(1, 7, big.data(), big.size()),
                                                ranks[0]->send(1, 3, small.data(), small.size())};
    ranks[0]->wait_all(sends);
  });
  std::vector<double> at;
  virtual_seconds_after([&] {
    auto later = ranks[1]->recv(0, 3, small_in.data(), small_in.size());
    auto earlier = ranks[1]->recv(0, 7, big_in.data(), big_in.size());
    ranks[1]->wait(earlier);
    at.push_back(coll::cluster_clock::now());
    ranks[1]->wait(later);
    at.push_back(coll::cluster_clock::now());
  });
  sender.join();
  ASSERT_EQ(at.size(), 2u);
  EXPECT_NEAR(at[0], 2e-3, 1e-9);
  EXPECT_NEAR(at[1], 2.01e-3, 1e-9);
}

TEST(ShapedTransportVirtualClock, RanksOfOneNodeShareItsNicWhicheverReservesFirst) {
  coll::LinkShape shape;
  shape.inter = {0, 1 / 8e6};
  auto ranks = shaped_world(on_virtual_clock(shape), {0, 0, 1, 1});
  constexpr std::size_t kTotal = 4u << 20, kPiece = 64u << 10;
  std::vector<std::byte> data(kTotal), in_2(kTotal), in_3(kTotal);
  std::vector<std::thread> senders;
  for (int from : {0, 1}) {
    senders.emplace_back([&, from] {
      std::vector<coll::Transport::Request> requests;
      for (std::size_t i = 0; i < kTotal / kPiece; ++i) {
        requests.push_back(ranks[from]->send(from + 2, i, data.data() + i * kPiece, kPiece));
      }
      ranks[from]->wait_all(requests);
    });
  }
  std::vector<double> arrived(2);
  std::vector<std::thread> receivers;
  for (int to : {2, 3}) {
    receivers.emplace_back([&, to] {
      auto& into = to == 2 ? in_2 : in_3;
      std::vector<coll::Transport::Request> requests;
      for (std::size_t i = 0; i < kTotal / kPiece; ++i) {
        requests.push_back(ranks[to]->recv(to - 2, i, into.data() + i * kPiece, kPiece));
      }
      ranks[to]->wait_all(requests);
      arrived[static_cast<std::size_t>(to - 2)] = coll::cluster_clock::now();
    });
  }
  for (auto& thread : senders) thread.join();
  for (auto& thread : receivers) thread.join();
  // 8 MiB through one 8 MB/s NIC: the last piece arrives when all have passed, with no gap.
  EXPECT_NEAR(std::max(arrived[0], arrived[1]), 2 * kTotal / 8e6, 1e-6);
  EXPECT_GE(std::min(arrived[0], arrived[1]), kTotal / 8e6 - 1e-6);
}

// A rank's own port is its GPU's link: a message to another node crosses it at the link's rate
// on its way to the NIC, which carries it at the network's, so the rank's next message, inside
// its node, waits for the first one's bytes to leave the GPU, not to cross the network.
TEST(ShapedTransportVirtualClock, ARanksPortCarriesAMessageToAnotherNodeAtItsOwnLinksRate) {
  coll::LinkShape shape;
  shape.intra = {0, 1 / 80e6};
  shape.inter = {0, 1 / 8e6};
  auto ranks = shaped_world(on_virtual_clock(shape), {0, 0, 1});
  constexpr std::size_t kBytes = 1u << 20;
  std::vector<std::byte> data(kBytes), far_in(kBytes), near_in(kBytes);
  std::thread sender([&] {
    std::vector<coll::Transport::Request> sends{ranks[0]->send(2, 1, data.data(), kBytes),
                                                ranks[0]->send(1, 2, data.data(), kBytes)};
    ranks[0]->wait_all(sends);
  });
  const std::vector<std::pair<int, std::vector<std::byte>*>> receivers{{2, &far_in}, {1, &near_in}};
  std::vector<double> arrived(2);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < receivers.size(); ++i) {
    threads.emplace_back([&, i] {
      auto& rank = *ranks[static_cast<std::size_t>(receivers[i].first)];
      auto request =
          rank.recv(0, static_cast<coll::Tag>(i + 1), receivers[i].second->data(), kBytes);
      rank.wait(request);
      arrived[i] = coll::cluster_clock::now();
    });
  }
  sender.join();
  for (auto& thread : threads) thread.join();
  EXPECT_NEAR(arrived[0], kBytes / 8e6, 1e-6);       // through the NIC
  EXPECT_NEAR(arrived[1], 2 * kBytes / 80e6, 1e-6);  // after the first one left the GPU's link
}

// Alpha is work a message costs its sender and its receiver, one message at a time (LogGP's
// overhead): a rank that sends three small messages, or takes three, spends three alphas, where
// large ones hide each one's alpha behind the bytes before it (above).
TEST(ShapedTransportVirtualClock, AMessagesAlphaIsWorkAtBothOfItsEnds) {
  coll::LinkShape shape;
  shape.intra = {1e-3, 0};
  auto ranks = shaped_world(on_virtual_clock(shape), {0, 0, 0, 0});
  int value = 0;
  std::vector<int> in(4);
  // Rank 0 sends to ranks 1, 2 and 3 in that order; each receiver's time is its arrival.
  std::thread fan_out([&] {
    std::vector<coll::Transport::Request> sends;
    for (int to = 1; to < 4; ++to) sends.push_back(ranks[0]->send(to, 1, &value, sizeof value));
    ranks[0]->wait_all(sends);
  });
  std::vector<double> arrived(4);
  std::vector<std::thread> receivers;
  for (int to = 1; to < 4; ++to) {
    receivers.emplace_back([&, to] {
      auto request = ranks[static_cast<std::size_t>(to)]->recv(0, 1, &in[to], sizeof(int));
      ranks[static_cast<std::size_t>(to)]->wait(request);
      arrived[static_cast<std::size_t>(to)] = coll::cluster_clock::now();
    });
  }
  fan_out.join();
  for (auto& thread : receivers) thread.join();
  EXPECT_NEAR(arrived[1], 1e-3, 1e-9);
  EXPECT_NEAR(arrived[2], 2e-3, 1e-9);
  EXPECT_NEAR(arrived[3], 3e-3, 1e-9);

  // Ranks 1, 2 and 3 each send one message to rank 0 (fresh threads: their clocks start at 0).
  std::vector<std::thread> senders;
  for (int from = 1; from < 4; ++from) {
    senders.emplace_back([&, from] {
      auto request = ranks[static_cast<std::size_t>(from)]->send(0, 2, &value, sizeof value);
      ranks[static_cast<std::size_t>(from)]->wait(request);
    });
  }
  const double fan_in = virtual_seconds_after([&] {
    std::vector<coll::Transport::Request> requests;
    for (int from = 1; from < 4; ++from) {
      requests.push_back(ranks[0]->recv(from, 2, &in[from], sizeof(int)));
    }
    ranks[0]->wait_all(requests);
  });
  for (auto& thread : senders) thread.join();
  EXPECT_NEAR(fan_in, 3e-3, 1e-9);
}
