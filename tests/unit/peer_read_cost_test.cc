// peer_read's cost formula: system calls per read on plain buffers past the staging size, plain
// inputs staged and loaded below it, mapped loads of shared buffers and the waits for the peers'
// lines, in place and out, its rounds as slot hand-offs, a node's shared staging path, and the
// ring it is priced as without peer memory.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "algorithms/peer_read_prices.hpp"
#include "algorithms/registry.hpp"
#include "coll/selector.hpp"
#include "model/link_model.hpp"
#include "synthetic_params.hpp"

namespace coll::model {
namespace {

using coll::peer_read_prices::kCrossingLinesAtMostBytes;
using coll::peer_read_prices::kLineBytes;
using coll::peer_read_prices::kLineCrossingSeconds;
using coll::peer_read_prices::kStageAtMostBytes;
using coll::testing::flat;
using coll::testing::staged_node_params;

constexpr std::size_t kSmall = 8;
constexpr std::size_t kLarge = 64u << 20;

double total(std::string_view algorithm, const CostParams& params, const Shape& shape,
             std::size_t bytes) {
  return predict(algorithm, params, shape, bytes)->total_s();
}

TEST(CostModel, PeerReadPaysASystemCallPerReadPastTheStagingSize) {
  // Priced per read at the cost its transport measured, where the inputs are too large to stage.
  CostParams params = flat(1e-6, 1e-10, 1e-10);
  const Shape pair = Shape::uniform(1, 2);
  const double large = 2.0 * kStageAtMostBytes;
  const double reads_free = total("peer_read", params, pair, large);
  params.transport.peer_read_call_s = 3e-6;
  // 2 ranks: one read per 256 KiB piece of the peer's half of this rank's block, then the peer's
  // block.
  const double pieces = large / 2 / (256 << 10);
  EXPECT_NEAR(total("peer_read", params, pair, large) - reads_free, (pieces + 1) * 3e-6, 1e-12);
  EXPECT_EQ(choose(params, pair, large, {"ring", "direct", "peer_read"}), "peer_read");
}

// A node whose reads are system calls of 3 us each, for plain buffers and for mapped ones.
std::pair<CostParams, CostParams> plain_and_mapped() {
  CostParams plain = flat(1e-6, 1e-10, 1e-10);
  plain.transport.peer_read_call_s = 3e-6;
  CostParams mapped = plain;
  mapped.call.peer_buffers_mapped = true;
  return {plain, mapped};
}

TEST(CostModel, PlainInputsUpToTheStagingSizeAreCopiedOnceAndLoaded) {
  // Between processes (reads are system calls) a plain input is staged where the peers map it:
  // priced as mapped buffers plus one copy of M, and no call; past the size, calls again.
  auto [plain, mapped] = plain_and_mapped();
  const Shape node = Shape::uniform(1, 4);
  for (const double m : {double(32 << 10), double(kStageAtMostBytes)}) {
    const auto staged = predict("peer_read", plain, node, m);
    const auto loaded = predict("peer_read", mapped, node, m);
    ASSERT_TRUE(staged && loaded);
    EXPECT_DOUBLE_EQ(staged->latency_s, loaded->latency_s) << m;
    EXPECT_NEAR(staged->bandwidth_s - loaded->bandwidth_s, m * plain.intra.beta_s_per_byte / 2,
                1e-15)
        << m;
    EXPECT_NE(staged->detail.find("staged"), std::string::npos) << staged->detail;
  }
  const auto past = predict("peer_read", plain, node, 2.0 * kStageAtMostBytes);
  ASSERT_TRUE(past);
  EXPECT_EQ(past->detail.find("staged"), std::string::npos) << past->detail;
  // Between threads a read is a plain copy already (no call measured): nothing is staged.
  plain.transport.peer_read_call_s = 0;
  const auto threads = predict("peer_read", plain, node, 32 << 10);
  ASSERT_TRUE(threads);
  EXPECT_EQ(threads->detail.find("staged"), std::string::npos) << threads->detail;
}

TEST(CostModel, WithoutPeerMemoryPeerReadIsPricedAsTheRingItRunsAs) {
  // A transport that cannot reach the peers' buffers (a shaped one) runs peer_read as the ring:
  // priced the same (with the argument check's round, which the ring waits for and the selector
  // adds to the ring's own price), it loses the tie to the ring at every size, so `auto` never
  // picks it.
  CostParams params = flat();
  params.transport.peer_memory = false;
  const Shape node = Shape::uniform(1, 4);
  const std::vector<std::string> candidates{"ring", "peer_read"};
  for (const std::size_t bytes : {kSmall, std::size_t(32) << 10, kLarge}) {
    EXPECT_DOUBLE_EQ(total("peer_read", params, node, bytes),
                     total("ring", params, node, bytes) + params.intra.alpha_s);
    EXPECT_EQ(choose(params, node, bytes, candidates), "ring") << bytes;
  }
  EXPECT_NE(predict("peer_read", params, node, kLarge)->detail.find("without peer memory"),
            std::string::npos);
}

TEST(CostModel, MappedPeerReadsPayNoCallsAndHalfTheCopying) {
  auto [plain, mapped] = plain_and_mapped();
  const Shape node = Shape::uniform(1, 4);
  // With a core per rank and with two ranks per core alike: a mapped load is one copy and no
  // call, and a round's messages arrive together.
  for (const double ranks_per_core : {1.0, 2.0}) {
    const CostParams by_calls_params = sharing_cores(plain, ranks_per_core);
    const auto by_calls = predict("peer_read", by_calls_params, node, kLarge);
    const auto by_loads = predict("peer_read", sharing_cores(mapped, ranks_per_core), node, kLarge);
    ASSERT_TRUE(by_calls && by_loads);
    // Three rounds of messages, then the argument check's own round (no node slots here).
    EXPECT_DOUBLE_EQ(by_loads->latency_s, 4 * by_calls_params.intra.alpha_s);
    EXPECT_DOUBLE_EQ(by_loads->bandwidth_s, by_calls->bandwidth_s / 2);
    EXPECT_DOUBLE_EQ(by_loads->reduction_s, by_calls->reduction_s);
    EXPECT_GT(by_calls->latency_s, by_loads->latency_s + 6 * 3e-6);
  }
}

// Measured at 2 ranks on shared buffers, 8 B: peer_read took 5-6 slot hand-offs, shm one.
TEST(CostModel, MappedPeerReadsWaitForThePeersLinesOncePerReadPhase) {
  CostParams params = flat(1e-6, 1e-10, 1e-10);
  params.transport.slot_handoff_s = 0.2e-6;
  params.transport.peer_line_s = 0.2e-6;
  params.transport.peer_read_call_s = 3e-6;
  const Shape pair = Shape::uniform(1, 2);
  const double large = 2.0 * kStageAtMostBytes;
  const auto plain = predict("peer_read", params, pair, large);
  params.call.peer_buffers_mapped = true;
  const auto mapped = predict("peer_read", params, pair, 8);
  ASSERT_TRUE(plain && mapped);
  EXPECT_DOUBLE_EQ(mapped->latency_s, 5 * 0.2e-6);
  EXPECT_NE(mapped->detail.find("2 waits for the peers' lines"), std::string::npos);
  // Plain reads (inputs too large to stage) pay their calls instead, which include the wait.
  const double reads = large / 2 / (256 << 10) + 1;
  EXPECT_DOUBLE_EQ(plain->latency_s, 3 * 0.2e-6 + reads * 3e-6);
  // Where ranks share cores a round is the scheduler's hand-over, a line still a line.
  const auto shared = predict("peer_read", sharing_cores(params, 2), pair, 8);
  ASSERT_TRUE(shared);
  EXPECT_DOUBLE_EQ(shared->latency_s, 3 * kSlotHandOverSeconds + 2 * 0.2e-6);
  EXPECT_EQ(choose(params, pair, 8, {"shm", "peer_read"}), "shm");
}

// Measured at 2 ranks in the build VM's slow phase (0.28 us hand-off), in place: 64 KiB shm 5.0
// us, peer_read 7.0 (out of place 6.3 and 5.7).
TEST(CostModel, InPlacePeerReadsWaitForEveryLineThePeersWrote) {
  CostParams params = flat(0.5e-6, 0.0714e-9, 0.1e-9);
  params.transport.slot_handoff_s = params.transport.peer_line_s = 0.28e-6;
  params.call.peer_buffers_mapped = true;
  const Shape pair = Shape::uniform(1, 2);
  const double m = 64 << 10;
  const auto out_of_place = predict("peer_read", params, pair, m);
  params.call.in_place = true;
  const auto in_place = predict("peer_read", params, pair, m);
  ASSERT_TRUE(out_of_place && in_place);
  // Half the vector is the peer's part of this rank's block: a line crossing per line of it.
  EXPECT_NEAR(in_place->bandwidth_s - out_of_place->bandwidth_s,
              m / 2 / kLineBytes * kLineCrossingSeconds, 1e-15);
  EXPECT_NE(in_place->detail.find("in place"), std::string::npos);
  const std::vector<std::string> candidates{"shm", "peer_read"};
  EXPECT_EQ(choose(params, pair, m, candidates), "shm");
  params.call.in_place = false;
  EXPECT_EQ(choose(params, pair, m, candidates), "peer_read");
  // Not timed (no slots): nothing to price it by, and shm's other costs do not change in place.
  params.transport.peer_line_s = 0;
  const double untimed_out_of_place = total("peer_read", params, pair, m);
  params.call.in_place = true;
  EXPECT_DOUBLE_EQ(total("peer_read", params, pair, m), untimed_out_of_place);
  params.transport.peer_line_s = 0.28e-6;
  const double shm_in_place = total("shm", params, pair, m);
  params.call.in_place = false;
  EXPECT_DOUBLE_EQ(total("shm", params, pair, m), shm_in_place);
  // The communicator's auto keeps both choices; calls pick by their buffers.
  params.call.peer_buffers_mapped = false;
  const Selector selector(params, {0, 0}, Tuning{});
  const Selector::Choice choice = selector.choose_for_buffers(64 << 10);
  EXPECT_EQ(choice.mapped, "peer_read");
  EXPECT_EQ(choice.mapped_in_place, "shm");
  EXPECT_EQ(selector.choose(64 << 10, true, true), "shm");
}

// The build VM's fast phase (hand-off timed at 0.08 us), 2 ranks in place: shm 0.74 / 3.19 / 6.36
// us at 16 / 64 / 128 KiB against peer_read 1.37 / 4.33 / 7.21, which pricing lines by the
// hand-off chose; at 1 MiB peer_read 33.7 against shm 54.0; at 256 KiB within 5 % of each other
// (bench/results/in-place-fast-2026-12-05/shm_peer_read_auto_1x2_run1).
TEST(CostModel, InPlaceLinesCostAsMuchWhateverTheHandOffAndOnlyWhileThePeersCacheThem) {
  CostParams params = flat(0.5e-6, 0.0714e-9, 0.1e-9);
  params.call.peer_buffers_mapped = true;
  const Shape pair = Shape::uniform(1, 2);
  auto extra = [&](double handoff, double m) {
    params.transport.slot_handoff_s = params.transport.peer_line_s = handoff;
    params.call.in_place = false;
    const double out_of_place = total("peer_read", params, pair, m);
    params.call.in_place = true;
    return total("peer_read", params, pair, m) - out_of_place;
  };
  EXPECT_NEAR(extra(0.06e-6, 64 << 10), extra(0.28e-6, 64 << 10), 1e-12);
  // The peers' share is priced up to kCrossingLinesAtMostBytes (they cache no more of it).
  const double capped = kCrossingLinesAtMostBytes / kLineBytes * kLineCrossingSeconds;
  EXPECT_NEAR(extra(0.06e-6, 1 << 20), capped, 1e-12);
  EXPECT_NEAR(extra(0.06e-6, 16 << 20), capped, 1e-12);
  params.transport.slot_handoff_s = params.transport.peer_line_s = 0.06e-6;
  params.call.in_place = true;
  const std::vector<std::string> candidates{"shm", "peer_read"};
  for (const double m : {16 << 10, 64 << 10, 128 << 10}) {
    EXPECT_EQ(choose(params, pair, m, candidates), "shm") << m << " B";
  }
  EXPECT_EQ(choose(params, pair, 1 << 20, candidates), "peer_read");
}

TEST(CostModel, PeerReadsRoundsAreSlotHandOffsCarryingTheCheckWhereTheNodeHasSlots) {
  CostParams messages = flat(1e-6, 1e-10, 1e-10);
  messages.transport.peer_read_call_s = 3e-6;
  CostParams slots = messages;
  slots.transport.slot_handoff_s = 0.2e-6;
  const Shape node = Shape::uniform(1, 4);
  const auto by_messages = predict("peer_read", messages, node, kLarge);
  const auto by_slots = predict("peer_read", slots, node, kLarge);
  ASSERT_TRUE(by_messages && by_slots);
  const double calls = by_slots->latency_s - 3 * 0.2e-6;
  EXPECT_GT(calls, 0);  // plain reads still pay their calls
  EXPECT_DOUBLE_EQ(by_messages->latency_s, (3 * 3 + 1) * 1e-6 + calls);
  EXPECT_EQ(by_slots->detail.find("argument check"), std::string::npos);
  EXPECT_NE(by_messages->detail.find("argument check"), std::string::npos);
  // Across nodes it runs ring after the check's round, which ring does not carry (the selector
  // adds it to ring's own price, not part of this one).
  const Shape nodes = Shape::uniform(2, 2);
  const auto across = predict("peer_read", slots, nodes, kLarge);
  const auto ring = predict("ring", slots, nodes, kLarge);
  ASSERT_TRUE(across && ring);
  EXPECT_DOUBLE_EQ(across->total_s(), ring->total_s() + 1e-6);
}

TEST(CostModel, PeerReadsShareAStagedNodesPathAsTheRingsStepsDo) {
  // 4 ranks read at once, at the ring's price per byte; the ring's fewer message rounds then
  // win at any size.
  const CostParams staged = staged_node_params();
  const Shape node = Shape::uniform(1, 4);
  const double m = double(kLarge);
  const auto peer_read = predict("peer_read", staged, node, kLarge);
  ASSERT_TRUE(peer_read);
  EXPECT_DOUBLE_EQ(peer_read->bandwidth_s, 2 * 3.0 / 4 * m * 16e-11);
  EXPECT_EQ(choose(staged, node, kLarge, {"ring", "peer_read"}), "ring");
}

}  // namespace
}  // namespace coll::model
