// Collectives/CrossRankCollectives: broadcast and all-gather copy every bit (random bit patterns,
// so every class of value, signalling NaNs included); reduce (root only) and reduce-scatter (each
// rank its block) are within the bound of the reference (cross_rank_bits.hpp); at 2, 3, 4, 5 and
// 8 ranks on one node or several (uneven) nodes.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "collectives/collectives.hpp"
#include "cross_rank_bits.hpp"

namespace {

using namespace coll::testing::cross_rank;
using coll::ReduceOp;

// ---- Broadcast, all-gather, reduce, reduce-scatter ----

struct Placement {
  int ranks;
  bool one_node;
};

void PrintTo(const Placement& shape, std::ostream* out) {
  *out << placement(shape.ranks, shape.one_node);
}

struct CopyCase {
  const Format* format;
  std::size_t count;
  int root;  // broadcast
  bool in_place;
  coll::Tuning tuning;
};

std::string describe(const CopyCase& c, const char* collective) {
  return std::string(collective) + " of " + std::to_string(c.count) + " x " +
         std::string(c.format->name()) +
         (c.root >= 0 ? " from rank " + std::to_string(c.root) : "") +
         (c.in_place ? " in place" : " out of place");
}

// Every type at each count from each root (-1: none), out of place and then in place, in 256-
// and 512-byte segments up to 2000 elements, 4 and 8 KiB beyond.
std::vector<CopyCase> copy_cases(std::initializer_list<std::size_t> counts,
                                 std::initializer_list<int> roots) {
  std::vector<CopyCase> cases;
  for (const Format* f : kFormats) {
    for (std::size_t count : counts) {
      for (int root : roots) {
        for (bool in_place : {false, true}) {
          cases.push_back({f, count, root, in_place,
                           count > 2000 ? segments(4 << 10, 8 << 10) : segments(256, 512)});
        }
      }
    }
  }
  return cases;
}

struct ReductionCase {
  const Format* format;
  ReduceOp op;
  std::size_t count;  // reduce: the vector; reduce-scatter: each rank's block
  int root;           // reduce
  bool in_place;
  coll::Tuning tuning;
};

std::string describe(const ReductionCase& c, const char* collective) {
  return std::string(collective) + " of " + std::to_string(c.count) + " x " +
         std::string(c.format->name()) + " " + std::string(coll::op_name(c.op)) +
         (c.root >= 0 ? " to rank " + std::to_string(c.root) : "") +
         (c.in_place ? " in place" : " out of place");
}

// Every type: every op at 1, 7 and 1003 elements to each of `roots` (-1: none), out of place and
// then in place, in 256- and 512-byte segments; then `large` in that type.
std::vector<ReductionCase> reduction_cases(std::initializer_list<int> roots, ReductionCase large) {
  std::vector<ReductionCase> cases;
  for (const Format* f : kFormats) {
    for (int o = 0; o < coll::kNumReduceOps; ++o) {
      for (std::size_t count : {1, 7, 1003}) {
        for (int root : roots) {
          for (bool in_place : {false, true}) {
            cases.push_back({f, ReduceOp(o), count, root, in_place, segments(256, 512)});
          }
        }
      }
    }
    large.format = f;
    cases.push_back(large);
  }
  return cases;
}

class CrossRankCollectives : public SeededSuite<Placement> {
 protected:
  // Runs `cases` of `collective` on rank threads: prepare(c) alone, run(c, rank, env) on every
  // rank, then check(c, findings) alone; what failed and what the checks found fail the test.
  template <class Case>
  void run_cases(const std::vector<Case>& cases, const char* collective,
                 const std::type_identity_t<std::function<void(const Case&)>>& prepare,
                 const std::type_identity_t<std::function<void(const Case&, int, RankEnv&)>>& run,
                 const std::type_identity_t<std::function<void(const Case&, Findings&)>>& check) {
    SCOPED_TRACE(seed_text());
    const Placement shape = GetParam();
    const std::string where =
        "[" + seed_text() + "] " + placement(shape.ranks, shape.one_node) + ", ";
    std::vector<std::string> failures;
    Steps steps;
    steps.count = cases.size();
    steps.describe = [&](std::size_t step) { return describe(cases[step], collective); };
    steps.prepare = [&](std::size_t step) { prepare(cases[step]); };
    steps.run = [&](std::size_t step, int rank, RankEnv& env) { run(cases[step], rank, env); };
    steps.check = [&](std::size_t step) {
      Findings findings(where + describe(cases[step], collective) + ", ");
      check(cases[step], findings);
      findings.flush(failures);
    };
    for (const std::string& error : run_on_rank_threads(shape.ranks, shape.one_node, steps)) {
      ADD_FAILURE() << where << error;
    }
    for (const std::string& failure : failures) ADD_FAILURE() << failure;
  }
};

// Bit for bit: broadcast from the first and the last rank, in and out of place (at the root).
TEST_P(CrossRankCollectives, BroadcastCopiesEveryBit) {
  const int n = GetParam().ranks;
  const std::vector<CopyCase> cases = copy_cases({1, 7, 1003, 65537}, {0, n - 1});
  std::vector<std::byte> source;
  std::vector<std::vector<std::byte>> recv(static_cast<std::size_t>(n));
  std::vector<std::byte> root_send;
  run_cases<CopyCase>(
      cases, "broadcast",
      [&](const CopyCase& c) {
        source = random_bits(*c.format, case_seed(2, *c.format, ReduceOp::Sum, c.count, n) + c.root,
                             c.count);
        for (auto& buffer : recv) buffer.assign(source.size(), std::byte{0xa5});
        root_send = source;
        if (c.in_place) recv[static_cast<std::size_t>(c.root)] = source;
      },
      [&](const CopyCase& c, int rank, RankEnv& env) {
        void* data = recv[static_cast<std::size_t>(rank)].data();
        if (rank == c.root && !c.in_place) std::memcpy(data, root_send.data(), root_send.size());
        coll::chain_broadcast(env.context(c.tuning), data, c.count, c.format->type, c.root);
      },
      [&](const CopyCase& c, Findings& findings) {
        for (int r = 0; r < n; ++r) {
          check_copy(*c.format, source.data(), recv[static_cast<std::size_t>(r)].data(), c.count,
                     "rank " + std::to_string(r) + " unlike the root's input", findings);
        }
        if (root_send != source) findings.add("send buffer", "the root's changed");
      });
}

// Bit for bit: every rank's block in every rank's result, in and out of place.
TEST_P(CrossRankCollectives, AllGatherCopiesEveryBit) {
  const int n = GetParam().ranks;
  const auto ranks = static_cast<std::size_t>(n);
  const std::vector<CopyCase> cases = copy_cases({1, 7, 1003, 8193}, {-1});
  std::vector<std::vector<std::byte>> inputs(ranks), send(ranks), recv(ranks);
  const auto block_bytes = [](const CopyCase& c) {
    return c.count * static_cast<std::size_t>(c.format->bytes);
  };
  run_cases<CopyCase>(
      cases, "all-gather",
      [&](const CopyCase& c) {
        const std::size_t block = block_bytes(c);
        for (std::size_t r = 0; r < ranks; ++r) {
          inputs[r] = random_bits(*c.format, case_seed(3, *c.format, ReduceOp::Sum, c.count, n) + r,
                                  c.count);
          send[r] = inputs[r];
          recv[r].assign(block * ranks, std::byte{0xa5});
          if (c.in_place) std::memcpy(recv[r].data() + r * block, inputs[r].data(), block);
        }
      },
      [&](const CopyCase& c, int rank, RankEnv& env) {
        const auto r = static_cast<std::size_t>(rank);
        const void* mine = c.in_place ? recv[r].data() + r * block_bytes(c) : send[r].data();
        coll::ring_allgather(env.context(c.tuning), mine, recv[r].data(), c.count, c.format->type);
      },
      [&](const CopyCase& c, Findings& findings) {
        for (std::size_t r = 0; r < ranks; ++r) {
          for (std::size_t owner = 0; owner < ranks; ++owner) {
            check_copy(
                *c.format, inputs[owner].data(), recv[r].data() + owner * block_bytes(c), c.count,
                "rank " + std::to_string(r) + " unlike rank " + std::to_string(owner) + "'s input",
                findings);
          }
          if (!c.in_place && send[r] != inputs[r]) {
            findings.add("send buffer", "rank " + std::to_string(r) + "'s changed");
          }
        }
      });
}

// The root's result within the bound of the reference: to the first and the last rank, in and
// out of place (at the root; the others pass no receive buffer).
TEST_P(CrossRankCollectives, ReduceIsWithinTheBoundOfTheReference) {
  const int n = GetParam().ranks;
  const auto ranks = static_cast<std::size_t>(n);
  const std::vector<ReductionCase> cases = reduction_cases(
      {0, n - 1}, {nullptr, ReduceOp::Sum, 65537, n / 2, false, segments(4 << 10, 8 << 10)});
  std::vector<std::vector<std::byte>> inputs(ranks), send(ranks);
  std::vector<std::byte> root_recv;
  run_cases<ReductionCase>(
      cases, "reduce",
      [&](const ReductionCase& c) {
        fill_reduction_inputs(*c.format, c.op, case_seed(4, *c.format, c.op, c.count, n), c.count,
                              inputs);
        for (std::size_t r = 0; r < ranks; ++r) send[r] = inputs[r];
        root_recv.assign(c.in_place ? 0 : inputs[0].size(), std::byte{0xa5});
      },
      [&](const ReductionCase& c, int rank, RankEnv& env) {
        std::byte* mine = send[static_cast<std::size_t>(rank)].data();
        void* out = rank != c.root ? nullptr : c.in_place ? mine : root_recv.data();
        coll::chain_reduce(env.context(c.tuning), mine, out, c.count, c.format->type, c.op, c.root);
      },
      [&](const ReductionCase& c, Findings& findings) {
        const auto root = static_cast<std::size_t>(c.root);
        check_reduction(*c.format, c.op, case_seed(4, *c.format, c.op, c.count, n), inputs,
                        c.in_place ? send[root].data() : root_recv.data(), 0, c.count,
                        "rank " + std::to_string(c.root), findings);
        for (std::size_t r = 0; r < ranks; ++r) {
          if ((r != root || !c.in_place) && send[r] != inputs[r]) {
            findings.add("send buffer", "rank " + std::to_string(r) + "'s changed");
          }
        }
      });
}

// Each rank's block within the bound of the reference, in and out of place.
TEST_P(CrossRankCollectives, ReduceScatterIsWithinTheBoundOfTheReference) {
  const int n = GetParam().ranks;
  const auto ranks = static_cast<std::size_t>(n);
  const std::vector<ReductionCase> cases =
      reduction_cases({-1}, {nullptr, ReduceOp::Sum, 8193, -1, true, segments(4 << 10, 8 << 10)});
  std::vector<std::vector<std::byte>> inputs(ranks), send(ranks), recv(ranks);
  // Rank r's block: in place, its part of the send buffer.
  const auto output = [&](const ReductionCase& c, std::size_t r) {
    const std::size_t block = c.count * static_cast<std::size_t>(c.format->bytes);
    return c.in_place ? send[r].data() + r * block : recv[r].data();
  };
  run_cases<ReductionCase>(
      cases, "reduce-scatter",
      [&](const ReductionCase& c) {
        fill_reduction_inputs(*c.format, c.op, case_seed(5, *c.format, c.op, c.count, n),
                              c.count * ranks, inputs);
        for (std::size_t r = 0; r < ranks; ++r) {
          send[r] = inputs[r];
          recv[r].assign(c.in_place ? 0 : c.count * static_cast<std::size_t>(c.format->bytes),
                         std::byte{0xa5});
        }
      },
      [&](const ReductionCase& c, int rank, RankEnv& env) {
        const auto r = static_cast<std::size_t>(rank);
        coll::ring_reduce_scatter_to(env.context(c.tuning), send[r].data(), output(c, r), c.count,
                                     c.format->type, c.op);
      },
      [&](const ReductionCase& c, Findings& findings) {
        for (std::size_t r = 0; r < ranks; ++r) {
          check_reduction(*c.format, c.op, case_seed(5, *c.format, c.op, c.count, n), inputs,
                          output(c, r), r * c.count, c.count, "rank " + std::to_string(r),
                          findings);
          if (!c.in_place && send[r] != inputs[r]) {
            findings.add("send buffer", "rank " + std::to_string(r) + "'s changed");
          }
        }
      });
}

std::vector<Placement> every_rank_count_and_placement() {
  std::vector<Placement> shapes;
  for (int ranks : {2, 3, 4, 5, 8}) {
    for (bool one_node : {false, true}) shapes.push_back({ranks, one_node});
  }
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(Collectives, CrossRankCollectives,
                         ::testing::ValuesIn(every_rank_count_and_placement()),
                         [](const auto& shape) {
                           return std::to_string(shape.param.ranks) + "ranks" +
                                  (shape.param.one_node ? "_1node" : "");
                         });

}  // namespace
