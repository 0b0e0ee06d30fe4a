// The algorithms' schedules as pure functions, without processes: ring steps, the double binary
// tree's shape, halving-doubling's pairs, the parameter server's shard owners, hierarchical's
// rails, direct's shifts.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "algorithms/direct_schedule.hpp"
#include "algorithms/halving_doubling_schedule.hpp"
#include "algorithms/hierarchical_schedule.hpp"
#include "algorithms/parameter_server_schedule.hpp"
#include "algorithms/ring_schedule.hpp"
#include "algorithms/tree_schedule.hpp"

namespace coll {
namespace {

TEST(RingSchedule, EachRankReducesEveryOtherBlockOnceAndGathersTheRest) {
  for (int n = 2; n <= 9; ++n) {
    for (int me = 0; me < n; ++me) {
      const RingSchedule ring(n, me);
      const RingSchedule left(n, (me + n - 1) % n);
      ASSERT_EQ(ring.steps(), 2 * (n - 1));
      std::multiset<int> reduced, gathered;
      for (int step = 0; step < ring.steps(); ++step) {
        // What arrives is what the left neighbour sent at the same step.
        EXPECT_EQ(ring.recv_block(step), left.send_block(step)) << n << " " << me << " " << step;
        (ring.reduce_step(step) ? reduced : gathered).insert(ring.recv_block(step));
      }
      // Reduce-scatter: every block but its own input's start, once; the last one completes.
      for (int block = 0; block < n; ++block) {
        EXPECT_EQ(reduced.count(block), block == me ? 0u : 1u) << n << " " << me;
        EXPECT_EQ(gathered.count(block), block == ring_block_of(me, n) ? 0u : 1u) << n << " " << me;
      }
      EXPECT_EQ(ring.recv_block(n - 2), ring_block_of(me, n));
      // The all-gather starts by sending the block this rank completed.
      EXPECT_EQ(ring.send_block(n - 1), ring_block_of(me, n));
    }
  }
}

TEST(DirectSchedule, EveryOrderedPairOnceAndTheFirstMessageGoesToTheNextMember) {
  for (int n = 1; n <= 9; ++n) {
    const DirectSchedule direct(n);
    ASSERT_EQ(direct.shifts(), n - 1);
    std::set<std::pair<int, int>> sent, received;
    for (int member = 0; member < n; ++member) {
      if (n > 1) {
        // The argument check's neighbours: the carried message is each member's first.
        EXPECT_EQ(direct.destination(member, 0), (member + 1) % n) << n;
        EXPECT_EQ(direct.source(member, 0), (member + n - 1) % n) << n;
      }
      for (int shift = 0; shift < direct.shifts(); ++shift) {
        const int to = direct.destination(member, shift);
        const int from = direct.source(member, shift);
        EXPECT_NE(to, member);
        EXPECT_TRUE(sent.emplace(member, to).second) << n << " " << member << " " << shift;
        EXPECT_TRUE(received.emplace(from, member).second) << n << " " << member << " " << shift;
        // Whoever this member receives from in a shift sends to it in the same shift.
        EXPECT_EQ(direct.destination(from, shift), member) << n << " " << member << " " << shift;
      }
    }
    EXPECT_EQ(sent.size(), std::size_t(n) * std::size_t(n - 1));
    EXPECT_EQ(sent, received);
  }
}

TEST(TreeSchedule, BothTreesSpanTheGroupWithAtMostTwoChildren) {
  for (int n = 1; n <= 40; ++n) {
    std::vector<int> interior(static_cast<std::size_t>(n), 0);
    for (int tree = 0; tree < 2; ++tree) {
      int roots = 0;
      for (int me = 0; me < n; ++me) {
        const TreeNode node = tree_node(tree, me, n);
        roots += node.parent < 0;
        for (const int child : {node.left, node.right}) {
          if (child < 0) continue;
          ASSERT_LT(child, n);
          EXPECT_EQ(tree_node(tree, child, n).parent, me) << n << " tree " << tree;
        }
        EXPECT_TRUE(node.right < 0 || node.left >= 0);  // the left child comes first
        if (node.left >= 0) ++interior[static_cast<std::size_t>(me)];
        // Spanning: the parents lead to the root in `depth` steps, without a cycle.
        int steps = 0;
        for (int at = me; tree_node(tree, at, n).parent >= 0; at = tree_node(tree, at, n).parent) {
          ASSERT_LT(++steps, n + 1) << n << " tree " << tree << ": cycle";
        }
        EXPECT_EQ(steps, node.depth);
      }
      EXPECT_EQ(roots, 1) << n << " tree " << tree;
    }
    // Complementary: no rank is interior in both trees, so its port carries one tree's load.
    for (int me = 0; me < n; ++me) EXPECT_LE(interior[static_cast<std::size_t>(me)], 1) << n;
  }
}

TEST(HalvingDoublingSchedule, PairsAreSymmetricAndTheFoldCoversEveryRank) {
  for (int n = 1; n <= 33; ++n) {
    const HalvingDoublingSchedule pairs(n);
    EXPECT_EQ(pairs.power() + pairs.extra(), n);
    EXPECT_LT(pairs.extra(), pairs.power());
    EXPECT_EQ(1 << pairs.steps(), pairs.power());
    std::set<int> core;
    for (int member = 0; member < n; ++member) {
      if (pairs.folds(member)) {
        EXPECT_EQ(pairs.fold_partner(pairs.fold_partner(member)), member);
        EXPECT_NE(pairs.sits_out(member), pairs.sits_out(pairs.fold_partner(member)));
      }
      if (pairs.sits_out(member)) continue;
      const int rank = pairs.core_rank(member);
      EXPECT_EQ(pairs.member_of(rank), member);
      core.insert(rank);
    }
    // The core is exactly 0..power-1: every rank not sitting out has one core rank.
    EXPECT_EQ(core.size(), static_cast<std::size_t>(pairs.power())) << n;
    EXPECT_EQ(*core.rbegin(), pairs.power() - 1);
    for (int step = 0; step < pairs.steps(); ++step) {
      for (int rank = 0; rank < pairs.power(); ++rank) {
        const int partner = pairs.partner(rank, step);
        EXPECT_FALSE(pairs.sits_out(partner));
        EXPECT_EQ(pairs.partner(pairs.core_rank(partner), step), pairs.member_of(rank));
        EXPECT_EQ(pairs.core_rank(partner) ^ rank, pairs.distance(step));
      }
    }
  }
}

TEST(ParameterServerSchedule, ServersAreSpreadOverNodesOrDedicated) {
  const std::vector<int> nodes{0, 0, 0, 1, 1, 1};
  ServerPlacement placement;
  EXPECT_EQ(ps_servers(nodes, placement), (std::vector<int>{0, 1, 2, 3, 4, 5}));  // every rank
  placement.servers = 2;
  EXPECT_EQ(ps_servers(nodes, placement), (std::vector<int>{0, 3}));  // one per node
  placement.servers = 3;
  EXPECT_EQ(ps_servers(nodes, placement), (std::vector<int>{0, 1, 3}));
  placement.dedicated = true;
  EXPECT_EQ(ps_servers(nodes, placement), (std::vector<int>{3, 4, 5}));  // the last ranks
  placement.servers = 99;
  EXPECT_EQ(ps_server_count(6, placement), 6);
  EXPECT_EQ(ps_servers(nodes, placement).size(), 6u);
  // Uneven nodes: the first rank of each node, then the second of each.
  placement = ServerPlacement{};
  placement.servers = 4;
  EXPECT_EQ(ps_servers({5, 5, 5, 9, 7, 7}, placement), (std::vector<int>{0, 1, 3, 4}));
}

TEST(ParameterServerSchedule, PushesGoToOtherNodesFirstFromTheNextNode) {
  // Three nodes of two; a server on each node's first rank.
  const std::vector<int> nodes{0, 0, 1, 1, 2, 2};
  EXPECT_EQ(push_order({0, 2, 4}, nodes, 1), (std::vector<int>{2, 4, 0}));
  EXPECT_EQ(push_order({0, 2, 4}, nodes, 3), (std::vector<int>{4, 0, 2}));
  EXPECT_EQ(push_order({0, 2}, nodes, 4), (std::vector<int>{0, 2}));   // wrapping around
  EXPECT_EQ(push_order({0, 1}, {0, 0}, 1), (std::vector<int>{0, 1}));  // one node: as given
}

TEST(ParameterServerSchedule, EveryServerServesByPositionInTheNodeThenByNode) {
  const std::vector<int> nodes{0, 0, 0, 1, 1, 1};
  EXPECT_EQ(pull_order({1, 2, 3, 4, 5}, nodes), (std::vector<int>{3, 1, 4, 2, 5}));
  EXPECT_EQ(pull_order({0, 1, 2, 4, 5}, nodes), (std::vector<int>{0, 1, 4, 2, 5}));
  EXPECT_EQ(pull_order({2, 0, 1}, {0, 0, 0}), (std::vector<int>{0, 1, 2}));
}

TEST(HierarchicalSchedule, EveryShardHasOneRailMemberPerNode) {
  for (std::size_t shards = 1; shards <= 8; ++shards) {
    for (std::size_t local = 1; local <= shards; ++local) {
      std::vector<std::size_t> held(local, 0);
      for (std::size_t s = 0; s < shards; ++s) {
        const std::size_t member = rail_member(s, shards, local);
        ASSERT_LT(member, local);
        ++held[member];
        // The member is the one the ring reduce-scatter leaves holding the shard's block.
        const auto block = static_cast<std::size_t>(
            ring_block_of(static_cast<int>(member), static_cast<int>(local)));
        EXPECT_GE(s, first_shard(block, shards, local));
        EXPECT_LT(s, first_shard(block + 1, shards, local));
      }
      // Every member joins at least one rail; on a full node exactly one.
      for (const std::size_t count : held) {
        EXPECT_GE(count, 1u);
        EXPECT_TRUE(local < shards || count == 1u);
      }
    }
  }
}

}  // namespace
}  // namespace coll
