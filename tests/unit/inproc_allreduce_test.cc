// Every registered all-reduce algorithm, run through the registry over the in-process transport
// (ranks as threads): bit-exact against collbench's independent reference for every data type
// and operation, in and out of place, counts 0, 1, ranks-1, non-divisible, several pipelining
// segments and ~1 Mi, over 1-9 ranks on one or several (uneven) nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/registry.hpp"
#include "exact_data.hpp"
#include "inproc_rank.hpp"
#include "transport/inproc_transport.hpp"

namespace {

using coll::DataType;
using coll::ReduceOp;

struct Shape {
  std::string algorithm;
  int ranks;
  bool one_node;  // all ranks on one node (where peer_read reads each other's memory)
};

void PrintTo(const Shape& shape, std::ostream* out) {
  *out << shape.algorithm << " over " << shape.ranks << " ranks"
       << (shape.one_node ? " on one node" : "");
}

using coll::testing::node_map;

struct Case {
  DataType type;
  ReduceOp op;
  std::size_t count;
  bool in_place;
  std::size_t segment_bytes;
};

// Small counts with small segments (so they pipeline) for every type and op; one ~1 Mi case
// with the default segment size.
std::vector<Case> cases(int ranks) {
  const std::size_t n = static_cast<std::size_t>(ranks);
  std::vector<Case> all;
  for (int t = 0; t < coll::kNumDataTypes; ++t) {
    for (int o = 0; o < coll::kNumReduceOps; ++o) {
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, n - 1, 7 * n + 3, 1000 + n}) {
        for (bool in_place : {false, true}) {
          all.push_back({DataType(t), ReduceOp(o), count, in_place, 256});
        }
      }
    }
  }
  all.push_back({DataType::Float32, ReduceOp::Sum, (1u << 20) + 13, false, 256 << 10});
  all.push_back({DataType::Bfloat16, ReduceOp::Avg, (1u << 20) + 13, true, 256 << 10});
  return all;
}

std::string describe(const Case& c) {
  return std::to_string(c.count) + " x " + std::string(coll::dtype_name(c.type)) + " " +
         std::string(coll::op_name(c.op)) + (c.in_place ? " in place" : " out of place");
}

// One rank's thread: every case in the same order as its peers, each its own collective.
void run_rank(const coll::AlgorithmInfo& info, const std::shared_ptr<coll::InprocWorld>& world,
              const std::vector<int>& node_of_rank, int rank, std::vector<std::string>& failures) {
  const int ranks = world->size();
  coll::testing::InprocRank me(*world, rank, 30, node_of_rank);  // 30 s: a deadlock fails
  for (const Case& c : cases(ranks)) {
    const std::size_t bytes = c.count * coll::dtype_size(c.type);
    std::vector<std::byte> send(bytes), recv(bytes);
    collbench::fill_input(c.type, c.op, rank, send.data(), c.count);
    void* out = c.in_place ? send.data() : recv.data();
    coll::Tuning tuning;
    tuning.segment_bytes = c.segment_bytes;
    tuning.net_segment_bytes = c.segment_bytes;
    const coll::CollectiveContext context = me.context(tuning);
    try {
      info.run(context, {send.data(), out, c.count, c.type, c.op});
    } catch (const std::exception& error) {
      failures.push_back("rank " + std::to_string(rank) + ", " + describe(c) + ": " + error.what());
      return;  // peers then time out on this rank, which the failures report
    }
    const std::size_t wrong = collbench::count_wrong(c.type, c.op, ranks, out, c.count);
    if (wrong != 0) {
      failures.push_back("rank " + std::to_string(rank) + ", " + describe(c) + ": " +
                         std::to_string(wrong) + " wrong elements");
    }
  }
}

class InprocAllreduce : public ::testing::TestWithParam<Shape> {};

TEST_P(InprocAllreduce, BitExactForEveryTypeOpCountAndPlacement) {
  const Shape shape = GetParam();
  const coll::AlgorithmInfo* info = coll::find_algorithm(shape.algorithm);
  ASSERT_NE(info, nullptr);
  if (!coll::is_available(*info)) {
    GTEST_SKIP() << shape.algorithm << " is not available in this process (MPI job or GPU)";
  }
  const auto world = coll::InprocWorld::create(shape.ranks);
  const std::vector<int> node_of_rank = node_map(shape.ranks, shape.one_node);
  std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(shape.ranks));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < shape.ranks; ++rank) {
    threads.emplace_back(run_rank, std::cref(*info), std::cref(world), std::cref(node_of_rank),
                         rank, std::ref(failures[static_cast<std::size_t>(rank)]));
  }
  for (auto& thread : threads) thread.join();
  for (const auto& rank_failures : failures) {
    for (const auto& failure : rank_failures) ADD_FAILURE() << failure;
  }
}

std::vector<Shape> every_algorithm_and_rank_count() {
  std::vector<Shape> shapes;
  for (const auto& info : coll::allreduce_algorithms()) {
    for (int ranks : {1, 2, 3, 4, 5, 8, 9}) {
      shapes.push_back({std::string(info.name), ranks, false});
      if (ranks > 1) shapes.push_back({std::string(info.name), ranks, true});
    }
  }
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(Registry, InprocAllreduce,
                         ::testing::ValuesIn(every_algorithm_and_rank_count()),
                         [](const auto& shape) {
                           return shape.param.algorithm + "_" + std::to_string(shape.param.ranks) +
                                  "ranks" + (shape.param.one_node ? "_1node" : "");
                         });

}  // namespace
