// Registry/CrossRankBits: every registered all-reduce algorithm (skipped, with the reason, where
// this process cannot run it) through its context, at 2, 3, 4, 5 and 8 ranks on one node or
// several (uneven) nodes, plus hierarchical's other levels and the parameter server's other
// server placements at 5 and 8 ranks: every rank's result has rank 0's bits, in place gives the
// bits out of place gives, the send buffer out of place is untouched, and the result is within
// the bound of the reference (cross_rank_bits.hpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "cross_rank_bits.hpp"

namespace {

using namespace coll::testing::cross_rank;
using coll::DataType;
using coll::ReduceOp;

// ---- All-reduce: every registered algorithm ----

// A setting of the algorithm's own tuning besides its defaults: hierarchical's levels, the
// parameter server's servers.
struct Variant {
  std::string name;  // "" for the defaults
  std::string hier_intra = "ring";
  std::string hier_inter = "auto";  // ring without the communicator's cost model
  int ps_servers = 0;
  bool ps_dedicated = false;
};

struct Shape {
  std::string algorithm;
  int ranks;
  bool one_node;
  Variant variant;
};

std::string label(const Shape& shape) {
  return shape.algorithm + (shape.variant.name.empty() ? "" : " (" + shape.variant.name + ")");
}

void PrintTo(const Shape& shape, std::ostream* out) {
  *out << label(shape) << " over " << placement(shape.ranks, shape.one_node);
}

struct Case {
  const Format* format;
  ReduceOp op;
  std::size_t count;
  bool in_place;
  coll::Tuning tuning;
};

// Every type and op at 1, 7 and 1003 elements in 256- and 512-byte segments (several per block),
// out of place and then in place on the same inputs; then sum at 65537 elements in 4 and 8 KiB
// segments, in place for float16 and float32, out of place for the others (beyond a node slot's
// 64 KiB). No rank count divides these counts.
std::vector<Case> allreduce_cases() {
  std::vector<Case> cases;
  for (const Format* f : kFormats) {
    for (int o = 0; o < coll::kNumReduceOps; ++o) {
      for (std::size_t count : {1, 7, 1003}) {
        for (bool in_place : {false, true}) {
          cases.push_back({f, ReduceOp(o), count, in_place, segments(256, 512)});
        }
      }
    }
  }
  for (const Format* f : kFormats) {
    const bool in_place = f->type == DataType::Float16 || f->type == DataType::Float32;
    cases.push_back({f, ReduceOp::Sum, 65537, in_place, segments(4 << 10, 8 << 10)});
  }
  return cases;
}

std::string describe(const Case& c) {
  return std::to_string(c.count) + " x " + std::string(c.format->name()) + " " +
         std::string(coll::op_name(c.op)) + (c.in_place ? " in place" : " out of place");
}

class CrossRankBits : public SeededSuite<Shape> {};

TEST_P(CrossRankBits, EveryRankHasTheSameBitsWithinTheBoundOfTheReference) {
  const Shape shape = GetParam();
  SCOPED_TRACE(seed_text());
  const coll::AlgorithmInfo* info = coll::find_algorithm(shape.algorithm);
  ASSERT_NE(info, nullptr);
  if (!coll::is_available(*info)) {
    GTEST_SKIP() << shape.algorithm << " is not available in this process: " << info->summary;
  }
  const int n = shape.ranks;
  const std::vector<Case> cases = allreduce_cases();
  std::vector<std::vector<std::byte>> inputs(static_cast<std::size_t>(n));
  std::vector<std::vector<std::byte>> send(inputs.size()), recv(inputs.size());
  std::vector<std::byte> out_of_place;  // rank 0's result out of place, for the case in place
  std::vector<std::string> failures;
  const std::string where =
      "[" + seed_text() + "] " + label(shape) + ", " + placement(n, shape.one_node) + ", ";

  Steps steps;
  steps.count = cases.size();
  steps.describe = [&](std::size_t step) { return describe(cases[step]); };
  steps.prepare = [&](std::size_t step) {
    const Case& c = cases[step];
    fill_reduction_inputs(*c.format, c.op, case_seed(1, *c.format, c.op, c.count, n), c.count,
                          inputs);
    for (std::size_t r = 0; r < inputs.size(); ++r) {
      send[r] = inputs[r];
      recv[r].assign(c.in_place ? 0 : inputs[r].size(), std::byte{0xa5});
    }
  };
  steps.run = [&](std::size_t step, int rank, RankEnv& env) {
    const Case& c = cases[step];
    const auto r = static_cast<std::size_t>(rank);
    void* out = c.in_place ? send[r].data() : recv[r].data();
    coll::Tuning tuning = c.tuning;
    auto& options = tuning.algorithm_options;
    options.set("COLL_HIER_INTRA", shape.variant.hier_intra);
    options.set("COLL_HIER_INTER", shape.variant.hier_inter);
    options.set("COLL_PS_SERVERS", std::to_string(shape.variant.ps_servers));
    options.set("COLL_PS_DEDICATED", shape.variant.ps_dedicated ? "1" : "0");
    info->run(env.context(tuning), {send[r].data(), out, c.count, c.format->type, c.op});
  };
  steps.check = [&](std::size_t step) {
    const Case& c = cases[step];
    const Format& f = *c.format;
    const std::uint64_t seed_of_case = case_seed(1, f, c.op, c.count, n);
    Findings findings(where + describe(c) + ", ");
    const auto output = [&](std::size_t r) { return c.in_place ? send[r].data() : recv[r].data(); };
    const std::size_t bytes = inputs[0].size();
    check_allreduce(f, c.op, seed_of_case, inputs, output, c.count, findings);
    if (!c.in_place) {
      for (std::size_t r = 0; r < inputs.size(); ++r) {
        if (std::memcmp(send[r].data(), inputs[r].data(), bytes) != 0) {
          findings.add("send buffer", "rank " + std::to_string(r) + "'s changed out of place");
        }
      }
      out_of_place.assign(output(0), output(0) + bytes);
    } else if (out_of_place.size() == bytes && std::memcmp(out_of_place.data(), output(0), bytes)) {
      for (std::size_t i = 0; i < c.count; ++i) {
        const std::uint64_t in = load(f, output(0), i), out = load(f, out_of_place.data(), i);
        if (in == out) continue;
        findings.add("in place unlike out of place", "rank 0's element " + std::to_string(i) +
                                                         ": out of place " + hex(out, f.bytes) +
                                                         ", in place " + hex(in, f.bytes));
      }
    }
    findings.flush(failures);
  };

  for (const std::string& error : run_on_rank_threads(n, shape.one_node, steps)) {
    ADD_FAILURE() << where << error;
  }
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
}

// Every algorithm with its defaults at every rank count and placement; hierarchical's other
// levels and the parameter server's other placements of servers at 5 and 8 ranks on several
// nodes (on one node hierarchical has no inter-node level).
std::vector<Shape> every_algorithm_rank_count_and_placement() {
  std::vector<Shape> shapes;
  for (const auto& info : coll::allreduce_algorithms()) {
    for (int ranks : {2, 3, 4, 5, 8}) {
      for (bool one_node : {false, true}) {
        shapes.push_back({std::string(info.name), ranks, one_node, {}});
      }
    }
  }
  const std::vector<Variant> levels{
      {.name = "inter_halving_doubling", .hier_inter = "halving_doubling"},
      {.name = "intra_tree_inter_recursive_doubling",
       .hier_intra = "tree",
       .hier_inter = "recursive_doubling"}};
  const std::vector<Variant> servers{
      {.name = "1_server", .ps_servers = 1},
      {.name = "2_dedicated_servers", .ps_servers = 2, .ps_dedicated = true}};
  for (int ranks : {5, 8}) {
    for (const char* algorithm : {"hierarchical", "hierarchical_leader"}) {
      for (const Variant& variant : levels) shapes.push_back({algorithm, ranks, false, variant});
    }
    for (bool one_node : {false, true}) {
      for (const Variant& variant : servers) shapes.push_back({"ps", ranks, one_node, variant});
    }
  }
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(Registry, CrossRankBits,
                         ::testing::ValuesIn(every_algorithm_rank_count_and_placement()),
                         [](const auto& shape) {
                           const Variant& variant = shape.param.variant;
                           return shape.param.algorithm +
                                  (variant.name.empty() ? "" : "_" + variant.name) + "_" +
                                  std::to_string(shape.param.ranks) + "ranks" +
                                  (shape.param.one_node ? "_1node" : "");
                         });

}  // namespace
