// SocketLinks (the sockets transport): two ranks of two nodes as threads over loopback. Matching by
// tag in order whether the receive comes before or after its message, a message left in the
// socket until its receive is posted, messages buffered past a waiting receive, truncation, and
// a closed connection reported on the surviving side; three ranks' links all moving at once; the
// send buffer each socket gets.
#include "transport/socket_links.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <fstream>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/store_server.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"
#include "transport/socket_rendezvous.hpp"

namespace {

using coll::SocketLinks;

// Progresses until the operation completes (or 20 s pass) and returns its result.
SocketLinks::Result wait_for(SocketLinks& links, SocketLinks::Operation* operation) {
  const double give_up = coll::now_seconds() + 20;
  while (true) {
    links.progress();
    const SocketLinks::Result result = links.take_result(operation);
    if (result.state != SocketLinks::State::InProgress) return result;
    if (coll::now_seconds() > give_up) {
      ADD_FAILURE() << "operation did not complete";
      return result;
    }
  }
}

// Rank `rank` of `ranks` linked to every other over loopback, as the sockets transport links them.
SocketLinks linked_ranks(coll::Bootstrap& bootstrap, int rank, int ranks,
                         std::size_t send_buffer_bytes) {
  coll::NetworkInterface loopback;
  loopback.name = "lo";
  loopback.address = "127.0.0.1";
  const coll::RendezvousOptions options{loopback, "job secret", 20};
  std::vector<bool> linked(static_cast<std::size_t>(ranks), true);
  linked[static_cast<std::size_t>(rank)] = false;
  return SocketLinks(coll::connect_linked_ranks(bootstrap, linked, options), send_buffer_bytes);
}

SocketLinks linked_pair(coll::Bootstrap& bootstrap, int rank, std::size_t send_buffer_bytes) {
  return linked_ranks(bootstrap, rank, 2, send_buffer_bytes);
}

// Rank 0 and rank 1 on nodes 0 and 1, each running its part with its own links.
void run_pair(const std::function<void(SocketLinks&)>& zero,
              const std::function<void(SocketLinks&)>& one, std::size_t send_buffer_bytes = 0) {
  coll::StoreServer store("127.0.0.1", 0, "token");
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      auto bootstrap = coll::make_store_bootstrap(store.address(), "token", rank, 2, 20);
      SocketLinks links = linked_pair(*bootstrap, rank, send_buffer_bytes);
      (rank == 0 ? zero : one)(links);
      bootstrap->barrier("test/done");
    });
  }
  for (auto& rank : ranks) rank.join();
}

std::vector<std::uint32_t> counting(std::size_t count, std::uint32_t first) {
  std::vector<std::uint32_t> values(count);
  std::iota(values.begin(), values.end(), first);
  return values;
}

TEST(SocketLinks, MatchByTagInOrderBeforeOrAfterTheMessage) {
  const auto big = counting(1 << 18, 7);  // 1 MiB: read straight into the receive's buffer
  run_pair(
      [&](SocketLinks& links) {
        // Waiting for tag 6 first: the tag-5 message and the empty tag-7 one ahead of it must be
        // buffered, not left blocking the socket.
        std::vector<std::uint32_t> got_big(big.size());
        auto* large = links.receive(1, 6, got_big.data(), got_big.size() * 4);
        EXPECT_EQ(wait_for(links, large).bytes, big.size() * 4);
        EXPECT_EQ(got_big, big);
        std::uint32_t first = 0, second = 0;
        auto* a = links.receive(1, 5, &first, 4);
        auto* b = links.receive(1, 5, &second, 4);
        auto* empty = links.receive(1, 7, nullptr, 0);
        EXPECT_EQ(wait_for(links, a).state, SocketLinks::State::Done);
        EXPECT_EQ(wait_for(links, b).state, SocketLinks::State::Done);
        EXPECT_EQ(wait_for(links, empty).bytes, 0u);
        EXPECT_EQ(first, 10u);
        EXPECT_EQ(second, 11u);
      },
      [&](SocketLinks& links) {
        const std::uint32_t ten = 10, eleven = 11;
        std::vector<SocketLinks::Operation*> sends{
            links.send(0, 5, &ten, 4), links.send(0, 7, nullptr, 0),
            links.send(0, 6, big.data(), big.size() * 4), links.send(0, 5, &eleven, 4)};
        for (auto* send : sends) EXPECT_EQ(wait_for(links, send).state, SocketLinks::State::Done);
      });
}

TEST(SocketLinks, AMessageNobodyWaitsForStaysInTheSocketUntilItsReceive) {
  // 48 MiB: more than the kernel's socket buffers can hold (4 MiB to send, 32 MiB to receive at
  // most), so the send can only complete once the receiver reads the payload.
  const auto payload = counting(12 << 20, 1);
  std::atomic<bool> receive_posted{false};
  run_pair(
      [&](SocketLinks& links) {
        // Progress with no receive posted: the header is seen, the payload left to the kernel.
        const double until = coll::now_seconds() + 0.3;
        while (coll::now_seconds() < until) links.progress();
        EXPECT_TRUE(links.probe(1, 3));
        EXPECT_FALSE(links.probe(1, 4));
        std::vector<std::uint32_t> got(payload.size());
        receive_posted = true;
        auto* receive = links.receive(1, 3, got.data(), got.size() * 4);
        EXPECT_EQ(wait_for(links, receive).state, SocketLinks::State::Done);
        EXPECT_EQ(got, payload);
      },
      [&](SocketLinks& links) {
        auto* send = links.send(0, 3, payload.data(), payload.size() * 4);
        EXPECT_EQ(wait_for(links, send).state, SocketLinks::State::Done);
        EXPECT_TRUE(receive_posted) << "the payload was read before its receive was posted";
      });
}

TEST(SocketLinks, ALongerMessageThanTheReceiveIsReportedTruncated) {
  run_pair(
      [&](SocketLinks& links) {
        std::uint32_t one = 0;
        auto* receive = links.receive(1, 2, &one, 4);
        const SocketLinks::Result result = wait_for(links, receive);
        EXPECT_EQ(result.state, SocketLinks::State::Truncated);
        EXPECT_EQ(result.bytes, 8u);
        std::uint32_t after = 0;  // the link goes on with the next message
        EXPECT_EQ(wait_for(links, links.receive(1, 3, &after, 4)).state, SocketLinks::State::Done);
        EXPECT_EQ(after, 42u);
      },
      [&](SocketLinks& links) {
        const std::uint32_t two[2] = {1, 2}, answer = 42;
        wait_for(links, links.send(0, 2, two, sizeof two));
        wait_for(links, links.send(0, 3, &answer, 4));
      });
}

TEST(SocketLinks, AClosedConnectionIsTheLinksFailure) {
  coll::StoreServer store("127.0.0.1", 0, "token");
  std::string failure;
  std::thread leaver([&] {
    auto bootstrap = coll::make_store_bootstrap(store.address(), "token", 1, 2, 20);
    { SocketLinks links = linked_pair(*bootstrap, 1, 0); }  // connects, then closes
    bootstrap->barrier("test/closed");
  });
  auto bootstrap = coll::make_store_bootstrap(store.address(), "token", 0, 2, 20);
  SocketLinks links = linked_pair(*bootstrap, 0, 0);
  std::uint32_t value = 0;
  auto* receive = links.receive(1, 1, &value, 4);
  const double give_up = coll::now_seconds() + 20;
  while (links.failure(1).empty() && coll::now_seconds() < give_up) links.progress();
  EXPECT_EQ(links.failure(1), "connection closed");
  EXPECT_EQ(links.take_result(receive).state, SocketLinks::State::InProgress);
  bootstrap->barrier("test/closed");
  leaver.join();
}

// Three ranks, each linked to both others, swap 4 MiB and then 32 short messages both ways at
// once through 64 KiB send buffers: no send completes until its peer reads, and each peer also
// waits for its own sends, so every link must be written and read as it becomes ready, whichever
// of them progress() finds ready first; every byte arrives in its receive.
TEST(SocketLinks, EveryLinkMovesItsBytesWhileTheOthersWait) {
  constexpr int kRanks = 3;
  constexpr std::uint32_t kShort = 32;
  const auto vector_of = [](int from, int to) { return counting(1 << 20, 1000 * from + to); };
  coll::StoreServer store("127.0.0.1", 0, "token");
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      auto bootstrap = coll::make_store_bootstrap(store.address(), "token", rank, kRanks, 20);
      SocketLinks links = linked_ranks(*bootstrap, rank, kRanks, 64 << 10);
      std::vector<std::vector<std::uint32_t>> outgoing(kRanks), incoming(kRanks);
      std::vector<std::uint32_t> shorts_in(kRanks * kShort);
      const std::vector<std::uint32_t> shorts_out = counting(kShort, 100 * rank);
      std::vector<SocketLinks::Operation*> operations;
      for (int peer = 0; peer < kRanks; ++peer) {
        if (peer == rank) continue;
        outgoing[peer] = vector_of(rank, peer);
        incoming[peer].resize(outgoing[peer].size());
        operations.push_back(links.send(peer, 1, outgoing[peer].data(), outgoing[peer].size() * 4));
        for (std::uint32_t i = 0; i < kShort; ++i) {
          operations.push_back(links.send(peer, 2 + i, &shorts_out[i], 4));
        }
      }
      for (int peer = 0; peer < kRanks; ++peer) {
        if (peer == rank) continue;
        operations.push_back(
            links.receive(peer, 1, incoming[peer].data(), incoming[peer].size() * 4));
        for (std::uint32_t i = 0; i < kShort; ++i) {
          operations.push_back(links.receive(peer, 2 + i, &shorts_in[peer * kShort + i], 4));
        }
      }
      for (auto* operation : operations) {
        EXPECT_EQ(wait_for(links, operation).state, SocketLinks::State::Done);
      }
      for (int peer = 0; peer < kRanks; ++peer) {
        if (peer == rank) continue;
        EXPECT_EQ(incoming[peer], vector_of(peer, rank)) << "from rank " << peer;
        const std::vector<std::uint32_t> shorts(shorts_in.begin() + peer * kShort,
                                                shorts_in.begin() + (peer + 1) * kShort);
        EXPECT_EQ(shorts, counting(kShort, 100 * peer)) << "from rank " << peer;
      }
      bootstrap->barrier("test/done");
    });
  }
  for (auto& rank : ranks) rank.join();
}

// Linux caps SO_SNDBUF at net.core.wmem_max and doubles it for its bookkeeping.
TEST(SocketLinks, EachSocketGetsTheSendBufferAskedFor) {
  std::ifstream limit_file("/proc/sys/net/core/wmem_max");
  std::size_t limit = 0;
  if (!(limit_file >> limit)) GTEST_SKIP() << "net.core.wmem_max is not readable here";
  for (const std::size_t asked : {std::size_t{64} << 10, std::size_t{256} << 10}) {
    const std::size_t expected = 2 * std::min(asked, limit);
    run_pair([&](SocketLinks& links) { EXPECT_EQ(links.kernel_send_buffer(1), expected); },
             [&](SocketLinks& links) { EXPECT_EQ(links.kernel_send_buffer(0), expected); }, asked);
  }
}

}  // namespace
