// The peer_read all-reduce over real rank processes: ranks of one node read each other's buffers by
// cross-memory attach (the transport says so), bit-exact for every dtype and op, in and out of
// place; across emulated nodes, or with COLL_PEER_MEMORY=0, it runs ring and stays exact. Buffers
// from coll::allocate_shared are mapped by the peers and loaded directly, also when only some
// ranks' buffers are shared; plain inputs up to 4 MiB are copied where the peers map them. On one
// node its rounds pass through the node's slots, the first carrying the argument check: a rank that
// calls something else is named, never waited for.
#include <gtest/gtest.h>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;
using coll::testing::says;

coll::testing::CommandResult check_peer_read(const std::string& environment, int nodes,
                                             int ranks_per_node,
                                             const std::string& mode = "check") {
  // At 3 ranks the 8-byte types' blocks of 1572869 elements pass 4 MiB, where the peers no
  // longer hold them and they are reduced straight into the result; the others' go through a
  // private piece, several pieces each, where the hand-off is slow or, as with 3 ranks on the
  // build VM's 2 cores, not timed.
  return coll::testing::check_algorithm(environment, "peer_read", nodes, ranks_per_node, "1572869",
                                        mode);
}

void expect_exact(const coll::testing::CommandResult& result) {
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(says(result, "wrong 0")) << result.output;
}

TEST(PeerReadAllreduce, ThreeRanksOfOneNodeReadEachOther) {
  const auto result = check_peer_read("", 1, 3);
  expect_exact(result);
  EXPECT_TRUE(says(result, "cross-memory reads from 2 peer(s)")) << result.output;
}

TEST(PeerReadAllreduce, WithoutPeerMemoryRunsRingExactly) {
  const auto result = check_peer_read("COLL_PEER_MEMORY=0", 1, 2);
  expect_exact(result);
  EXPECT_FALSE(says(result, "cross-memory")) << result.output;
}

TEST(PeerReadAllreduce, AcrossEmulatedNodesRunsRingExactly) {
  const auto result = check_peer_read("", 2, 2);
  expect_exact(result);
  EXPECT_TRUE(says(result, "cross-memory reads from 1 peer(s)")) << result.output;
}

TEST(PeerReadAllreduce, SharedBuffersAreMappedByThePeersAndStayExact) {
  const auto result = check_peer_read("", 1, 3, "check-shared");
  expect_exact(result);
  for (const char* mapped : {"[coll rank 0] INFO: mapped rank 1's shared buffer",
                             "[coll rank 1] INFO: mapped rank 2's shared buffer",
                             "[coll rank 2] INFO: mapped rank 0's shared buffer"}) {
    EXPECT_TRUE(says(result, mapped)) << mapped << "\n" << result.output;
  }
  EXPECT_FALSE(says(result, "cannot map")) << result.output;
}

TEST(PeerReadAllreduce, SharedBuffersOnSomeRanksOnlyStayExact) {
  // Ranks 0 and 2 share their buffers, rank 1 does not: its peers map its staging copy where its
  // vector fits (up to 4 MiB: the 1- and 2-byte types here) and read it by system calls above.
  const auto result = check_peer_read("", 1, 3, "check-shared-even");
  expect_exact(result);
  EXPECT_TRUE(says(result, "[coll rank 1] INFO: mapped rank 2's shared buffer")) << result.output;
  EXPECT_TRUE(says(result, "[coll rank 0] INFO: mapped rank 1's shared buffer")) << result.output;
}

TEST(PeerReadAllreduce, PlainBuffersUpToTheStagingSizeAreMappedThroughACopy) {
  // Every type's largest vector here fits the staging size (524287 x 8 bytes < 4 MiB): each rank
  // copies its plain input where the peers map it, in and out of place, and every bit is exact.
  const auto result =
      coll::testing::check_algorithm("", "peer_read", 1, 3, "4099 131075 524287", "check");
  expect_exact(result);
  for (const char* mapped : {"[coll rank 0] INFO: mapped rank 1's shared buffer",
                             "[coll rank 1] INFO: mapped rank 2's shared buffer",
                             "[coll rank 2] INFO: mapped rank 0's shared buffer"}) {
    EXPECT_TRUE(says(result, mapped)) << mapped << "\n" << result.output;
  }
}

TEST(PeerReadAllreduce, SharedBuffersAcrossEmulatedNodesStayExact) {
  const auto result = check_peer_read("", 2, 2, "check-shared");
  expect_exact(result);
}

// A rank passing another count fails every rank before any read can leave a buffer; a rank
// running another algorithm (whose check is a message) is a mismatch, not a wait in the slots.
TEST(PeerReadAllreduce, OtherCallsFailNamingBothInsteadOfWaitingInTheSlots) {
  const auto launch = [](const std::string& mode) {
    return run_command(std::string("COLL_TIMEOUT=30 ") + COLLRUN_PATH + " -np 3 " +
                           RANK_PROGRAM_PATH + " " + mode + " peer_read",
                       60);
  };
  const auto count = launch("mismatch");
  EXPECT_NE(count.exit_code, 0) << count.output;
  EXPECT_TRUE(says(count,
                   "rank 0 called allreduce #1 of 100 x float32 sum (peer_read) but rank 1 "
                   "called allreduce #1 of 101 x float32 sum (peer_read)"))
      << count.output;
  EXPECT_FALSE(says(count, "COLL_TIMEOUT")) << count.output;
  const auto barrier = launch("barrier-mismatch");
  EXPECT_NE(barrier.exit_code, 0) << barrier.output;
  EXPECT_TRUE(says(barrier, "called barrier #1")) << barrier.output;
  EXPECT_TRUE(says(barrier, "called allreduce #1 of 1 x uint8 max (peer_read)")) << barrier.output;
  EXPECT_FALSE(says(barrier, "COLL_TIMEOUT")) << barrier.output;
}

}  // namespace
