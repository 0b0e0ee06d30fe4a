// The shared pipelining: segment sizing, the 24-bit tag budget, and the windowed loop.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/pipeline.hpp"

namespace coll {
namespace {

TEST(Segmentation, CutsIntoTheWantedSize) {
  const Segmentation cut(1000, 100, 1);
  EXPECT_EQ(cut.elems(), 100u);
  EXPECT_EQ(cut.segments(), 10u);
  EXPECT_EQ(Segmentation(1001, 100, 1).segments(), 11u);
  EXPECT_EQ(Segmentation(10, 100, 1).elems(), 10u);  // never longer than the block
  EXPECT_EQ(Segmentation(10, 0, 1).elems(), 1u);     // a segment smaller than one element
  EXPECT_EQ(Segmentation(0, 100, 1).segments(), 0u);
}

// COLL_NET_SEGMENT_BYTES holds for a group whose ranks are on several nodes, COLL_SEGMENT_BYTES
// for one inside a node, whatever the whole communicator spans.
TEST(Segmentation, AGroupAcrossNodesPipelinesInTheNetworksUnit) {
  Tuning tuning;
  tuning.segment_bytes = 4096;
  tuning.net_segment_bytes = 1 << 20;
  const std::vector<int> node_of_rank{0, 0, 1, 1};
  const Group node_one{{2, 3}, 0};
  const Group across{{1, 2}, 1};
  EXPECT_FALSE(spans_nodes(node_one, node_of_rank));
  EXPECT_TRUE(spans_nodes(across, node_of_rank));
  EXPECT_EQ(tuning.segment_bytes_for(spans_nodes(node_one, node_of_rank)), 4096u);
  EXPECT_EQ(tuning.segment_bytes_for(spans_nodes(across, node_of_rank)), std::size_t{1} << 20);
  EXPECT_EQ(Segmentation(1 << 20, tuning.segment_bytes_for(false) / 4, 1).elems(), 1024u);
  EXPECT_EQ(tuning.segments_in(10000, false), 3.0);  // 4096-byte segments, the last one short
  EXPECT_EQ(tuning.segments_in(0, true), 1.0);
}

TEST(Segmentation, PiecesCoverEveryBlockExactly) {
  const Segmentation cut(1000, 64, 1);
  for (const std::size_t length : {0u, 1u, 63u, 64u, 65u, 999u, 1000u}) {
    std::size_t next = 0;
    for (std::size_t s = 0; s < cut.segments(); ++s) {
      const Piece piece = cut.piece(length, s);
      if (piece.length == 0) {
        EXPECT_EQ(next, length);
        continue;
      }
      EXPECT_EQ(piece.offset, next) << length;
      EXPECT_LE(piece.length, cut.elems());
      next += piece.length;
    }
    EXPECT_EQ(next, length);
    EXPECT_EQ(cut.segments_of(length), (length + 63) / 64);
  }
}

TEST(Segmentation, SegmentsGrowSoThatMessageIndicesFitTheTag) {
  // 2^30 single-element segments with 6 messages each would need indices up to 6 * 2^30.
  for (const std::size_t messages : {1u, 2u, 6u, 30u}) {
    const std::size_t longest = std::size_t{1} << 30;
    const Segmentation cut(longest, 1, messages);
    EXPECT_LE(cut.segments() * messages, TagSpace::kMaxMessages) << messages;
    EXPECT_GE(cut.segments() * cut.elems(), longest);
    // And no larger than needed: one element less per segment would not fit.
    const std::size_t smaller = (longest + cut.elems() - 2) / (cut.elems() - 1);
    EXPECT_GT(smaller * messages, TagSpace::kMaxMessages) << messages;
  }
  // Below the cap, the wanted size stands.
  EXPECT_EQ(Segmentation(TagSpace::kMaxMessages / 2, 1, 2).elems(), 1u);
}

TEST(RunWindowed, KeepsAtMostTheWindowInFlightAndPostsInOrder) {
  for (const std::size_t window : {1u, 3u, 8u}) {
    std::vector<std::string> events;
    std::size_t in_flight = 0, most = 0, posted = 0;
    run_windowed(
        5, window,
        [&](std::size_t u) {
          EXPECT_EQ(u, posted++);
          most = std::max(most, ++in_flight);
          events.push_back("post " + std::to_string(u));
        },
        [&](std::size_t u) {
          ASSERT_LT(u, posted) << "finished before it was posted";
          --in_flight;
          events.push_back("finish " + std::to_string(u));
        });
    EXPECT_EQ(posted, 5u);
    EXPECT_EQ(in_flight, 0u);
    EXPECT_EQ(most, std::min<std::size_t>(window, 5));
    EXPECT_EQ(events.size(), 10u);
  }
  std::size_t calls = 0;
  run_windowed(
      0, 4, [&](std::size_t) { ++calls; }, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0u);
}

}  // namespace
}  // namespace coll
