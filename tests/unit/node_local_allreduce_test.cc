// The all-reduces that move no data through messages between ranks of one node: peer_read (every
// rank reads its peers' buffers through the transport's PeerMemory) and shm (the vectors pass
// through the node's shared-memory slots, no message at all). Where what they need is missing or
// the group spans nodes they run ring and direct instead, exactly, on every rank alike.
#include <gtest/gtest.h>

#include <cstdlib>

#include "measured_run.hpp"

namespace {

using coll::testing::Outcome;
using coll::testing::run_on_threads;

constexpr std::size_t kCount = (1u << 20) + 7;  // several pieces per block, uneven blocks

// The same on one node, with `variable` (read when the world is created) set to 0.
Outcome run_on_one_node_without(const char* variable, const char* algorithm) {
  ::setenv(variable, "0", 1);
  const Outcome outcome = run_on_threads(algorithm, {0, 0, 0}, kCount);
  ::unsetenv(variable);
  return outcome;
}

// The fallback algorithm ran: exact, with the data in messages.
void expect_exact_through_messages(const Outcome& outcome) {
  EXPECT_EQ(outcome.wrong, 0u);
  EXPECT_GT(outcome.largest_message, 1024u);
}

TEST(PeerReadAllreduce, OnOneNodeItsRoundsPassThroughTheSlots) {
  const Outcome outcome = run_on_threads("peer_read", {0, 0, 0}, kCount);
  EXPECT_EQ(outcome.wrong, 0u);
  EXPECT_EQ(outcome.messages, 0u);
}

TEST(PeerReadAllreduce, WithoutSlotsNoMessageCarriesData) {
  const Outcome outcome = run_on_one_node_without("COLL_NODE_SLOTS", "peer_read");
  EXPECT_EQ(outcome.wrong, 0u);
  EXPECT_GT(outcome.messages, 0u);
  // Two addresses and the size, each buffer's shared region (4 words), or a one-byte signal.
  EXPECT_LE(outcome.largest_message, 88u);
}

TEST(PeerReadAllreduce, AcrossNodesRunsRing) {
  expect_exact_through_messages(run_on_threads("peer_read", {0, 0, 1}, kCount));
}

TEST(PeerReadAllreduce, WithoutPeerMemoryRunsRing) {
  expect_exact_through_messages(run_on_one_node_without("COLL_PEER_MEMORY", "peer_read"));
}

TEST(ShmAllreduce, OnOneNodeNoMessageIsSent) {
  const Outcome outcome = run_on_threads("shm", {0, 0, 0}, kCount);  // 17 slot rounds
  EXPECT_EQ(outcome.wrong, 0u);
  EXPECT_EQ(outcome.messages, 0u);
}

TEST(ShmAllreduce, AcrossNodesRunsDirect) {
  expect_exact_through_messages(run_on_threads("shm", {0, 0, 1}, kCount));
}

TEST(ShmAllreduce, WithoutSlotsRunsDirect) {
  expect_exact_through_messages(run_on_one_node_without("COLL_NODE_SLOTS", "shm"));
}

}  // namespace
