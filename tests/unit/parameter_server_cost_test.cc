// The parameter server's cost formula: its servers (COLL_PS_SERVERS), push and pull in opposite
// directions, work overlapping bytes on presets with DMA engines, and the lead between
// back-to-back all-reduces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "algorithms/registry.hpp"
#include "coll/selector.hpp"
#include "synthetic_params.hpp"

namespace coll::model {
namespace {

using coll::testing::flat;

constexpr std::size_t kSmall = 8;
constexpr std::size_t kLarge = 64u << 20;

TEST(CostModel, ParameterServerFormulaFollowsCollPsServers) {
  const CostParams params = flat();
  const double m = double(kLarge);
  Tuning two_servers;
  two_servers.algorithm_options.set("COLL_PS_SERVERS", "2");
  // 8 ranks, 2 servers: each server receives a shard of M/2 from 7 ranks and sends one to the
  // other server, then the reverse in the pull; pipelined, each direction of its port carries
  // 8 shards.
  const auto ps = predict("ps", params, Shape::uniform(1, 8), kLarge, two_servers);
  ASSERT_TRUE(ps);
  const double segments = std::ceil(m / 2 / double(two_servers.segment_bytes));
  EXPECT_DOUBLE_EQ(ps->bandwidth_s,
                   std::max(8 * (m / 2), (1 + 1 / segments) * 7 * (m / 2)) * 1e-10);
  EXPECT_DOUBLE_EQ(ps->latency_s, 2 * 7 * 1e-6);
  EXPECT_NE(ps->detail.find("k=2"), std::string::npos) << ps->detail;
  // The communicator's selector passes its tuning to the formula.
  const Selector selector(params, std::vector<int>(8, 0), two_servers);
  EXPECT_DOUBLE_EQ(selector.predict("ps", kLarge)->total_s(), ps->total_s());
  EXPECT_GT(ps->total_s(), predict("ps", params, Shape::uniform(1, 8), kLarge)->total_s());
}

TEST(CostModel, ParameterServerOverlapsPushAndPullInOppositeDirections) {
  // Two ranks, one server: the push uses rank 1 -> 0, the pull 0 -> 1, at once once pipelined.
  Tuning one_server;
  one_server.algorithm_options.set("COLL_PS_SERVERS", "1");
  const double m = double(kLarge);
  const auto ps = predict("ps", flat(), Shape::uniform(1, 2), kLarge, one_server);
  ASSERT_TRUE(ps);
  const double segments = std::ceil(m / double(one_server.segment_bytes));
  EXPECT_DOUBLE_EQ(ps->bandwidth_s, m * 1e-10 * (1 + 1 / segments));
}

TEST(CostModel, ParameterServerOnDmaLinksOverlapsItsWorkWithTheBytes) {
  // One server of 4 ranks, one segment: each phase is its 3 messages' work or their bytes,
  // whichever is longer, plus the shorter of one message's alpha and bytes at its edge:
  // 2 max(alpha + 3 b, 3 alpha + b), where the linear exchange pays 2 (3 alpha + 3 b).
  Tuning one_server;
  one_server.algorithm_options.set("COLL_PS_SERVERS", "1");
  for (const double bytes_time : {1e-6, 20e-6}) {  // b below alpha, then above it
    CostParams params = flat(7e-6, bytes_time / kSmall, 0);
    const auto additive = predict("ps", params, Shape::uniform(1, 4), kSmall, one_server);
    params.charging.alpha_overlaps_bytes = true;
    const auto overlapped = predict("ps", params, Shape::uniform(1, 4), kSmall, one_server);
    ASSERT_TRUE(additive && overlapped);
    EXPECT_NEAR(additive->total_s(), 2 * (3 * 7e-6 + 3 * bytes_time), 1e-15);
    EXPECT_NEAR(overlapped->total_s(), 2 * std::max(7e-6 + 3 * bytes_time, 3 * 7e-6 + bytes_time),
                1e-15);
  }
  // Every rank a server: the last-served rank takes a message from each other server at once,
  // so below alpha the bytes queue behind the work, as in the linear exchange.
  CostParams params = flat(7e-6, 1e-6 / kSmall, 0);
  params.charging.alpha_overlaps_bytes = true;
  const auto all_serve = predict("ps", params, Shape::uniform(1, 4), kSmall);
  ASSERT_TRUE(all_serve);
  EXPECT_NEAR(all_serve->total_s(), 2 * (3 * 7e-6 + 3 * (1e-6 / 4)), 1e-15);
}

TEST(CostModel, ParameterServersLeadShrinksWithTheServersTheLastRankWaitsFor) {
  // Back to back, all-reduces overlap by the lead; the rank every server serves last takes k
  // pulls, then pushes k times: 2k - 1 of the busiest rank's c messages do not overlap (the
  // emulated links agree within 11 %: docs/emulation.md). Alpha alone, a server per node.
  const CostParams params = flat(1e-6, 0, 0);
  auto lead = [&](int nodes, int per_node) {
    Tuning servers;
    servers.algorithm_options.set("COLL_PS_SERVERS", std::to_string(nodes));
    return predict("ps", params, Shape::uniform(nodes, per_node), kSmall, servers)->lead_s;
  };
  EXPECT_NEAR(lead(1, 4), 2e-6, 1e-15);  // c = 3, k = 1
  EXPECT_NEAR(lead(2, 4), 4e-6, 1e-15);  // c = 7, k = 2
  EXPECT_NEAR(lead(4, 4), 8e-6, 1e-15);  // c = 15, k = 4
  EXPECT_NEAR(lead(2, 2), 0, 1e-15);     // c = 3, k = 2
}

}  // namespace
}  // namespace coll::model
