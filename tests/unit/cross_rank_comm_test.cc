// Communicator/CrossRankComm: every all-reduce algorithm and collective through coll::Comm (one
// node), as applications call them, with the argument check carried in their messages or node
// slots: the results as the other cross-rank bit tests check them (cross_rank_bits.hpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/registry.hpp"
#include "bootstrap/store_server.hpp"
#include "coll/comm.hpp"
#include "cross_rank_bits.hpp"

namespace {

using namespace coll::testing::cross_rank;
using coll::DataType;
using coll::ReduceOp;

// ---- Through the communicator, as applications call it: the argument check on ----

// Sets environment variables for its lifetime (the communicators read them when made).
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        ::setenv(name.c_str(), old->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

struct CommEnv {
  coll::Comm& comm;
};

enum class Collective { AllReduce, Broadcast, AllGather, Reduce, ReduceScatter };

struct CommCase {
  Collective collective;
  std::string algorithm;  // all-reduce's
  const Format* format;
  ReduceOp op;
  std::size_t count;  // all-gather: each rank's; reduce-scatter: each rank's block
  int root;           // broadcast, reduce
  bool in_place;
};

std::string describe(const CommCase& c) {
  static const char* const names[] = {"all-reduce", "broadcast", "all-gather", "reduce",
                                      "reduce-scatter"};
  const bool reduces =
      c.collective != Collective::Broadcast && c.collective != Collective::AllGather;
  return std::string(names[int(c.collective)]) +
         (c.algorithm.empty() ? "" : " (" + c.algorithm + ")") + " of " + std::to_string(c.count) +
         " x " + std::string(c.format->name()) +
         (reduces ? " " + std::string(coll::op_name(c.op)) : "") +
         (c.root >= 0 ? " root " + std::to_string(c.root) : "") +
         (c.in_place ? " in place" : " out of place");
}

// Every algorithm this process can run, every type and op at 7 and 1003 elements (256-byte
// segments), float32 sum at 65537; then the four other collectives.
std::vector<CommCase> comm_cases(int n) {
  std::vector<CommCase> cases;
  for (const auto& info : coll::allreduce_algorithms()) {
    if (!coll::is_available(info)) continue;
    const std::string name(info.name);
    for (const Format* f : kFormats) {
      for (int o = 0; o < coll::kNumReduceOps; ++o) {
        for (std::size_t count : {7, 1003}) {
          for (bool in_place : {false, true}) {
            cases.push_back({Collective::AllReduce, name, f, ReduceOp(o), count, -1, in_place});
          }
        }
      }
    }
    cases.push_back({Collective::AllReduce, name, &kFloat32, ReduceOp::Sum, 65537, -1, false});
  }
  for (const Format* f : kFormats) {
    for (std::size_t count : {7, 1003}) {
      for (bool in_place : {false, true}) {
        for (int root : {0, n - 1}) {
          cases.push_back({Collective::Broadcast, "", f, ReduceOp::Sum, count, root, in_place});
        }
        cases.push_back({Collective::AllGather, "", f, ReduceOp::Sum, count, -1, in_place});
      }
      for (int o = 0; o < coll::kNumReduceOps; ++o) {
        const bool odd = (o + count) % 2 != 0;
        cases.push_back({Collective::Reduce, "", f, ReduceOp(o), count, odd ? n - 1 : 0, odd});
        cases.push_back({Collective::ReduceScatter, "", f, ReduceOp(o), count, -1, !odd});
      }
    }
  }
  return cases;
}

class CrossRankComm : public SeededSuite<int> {};

// Every algorithm and collective through coll::Comm over the in-process transport (one node):
// the argument check rides in the first message of the algorithms that carry it (direct,
// recursive_doubling) or in the node's slots (shm, peer_read), as applications run them.
TEST_P(CrossRankComm, EveryAlgorithmAndCollectiveThroughTheCommunicator) {
  const int n = GetParam();
  const auto ranks = static_cast<std::size_t>(n);
  SCOPED_TRACE(seed_text());
  const std::vector<CommCase> cases = comm_cases(n);
  std::vector<std::vector<std::byte>> inputs(ranks), send(ranks), recv(ranks);
  std::vector<std::string> failures;
  const std::string where =
      "[" + seed_text() + "] communicator of " + std::to_string(n) + " ranks on 1 node, ";
  const auto block_bytes = [&](const CommCase& c) {
    return c.count * static_cast<std::size_t>(c.format->bytes);
  };
  const auto seed_of = [&](const CommCase& c) {
    return case_seed(10 + std::hash<std::string>()(c.algorithm) + std::uint64_t(c.collective) * 7,
                     *c.format, c.op, c.count, n);
  };
  const auto output = [&](const CommCase& c, std::size_t r) -> std::byte* {
    switch (c.collective) {
      case Collective::AllReduce:
      case Collective::Reduce:
        return c.in_place ? send[r].data() : recv[r].data();
      case Collective::ReduceScatter:
        return c.in_place ? send[r].data() + r * block_bytes(c) : recv[r].data();
      default:
        return recv[r].data();
    }
  };

  StepsOf<CommEnv> steps;
  steps.count = cases.size();
  steps.describe = [&](std::size_t step) { return describe(cases[step]); };
  steps.prepare = [&](std::size_t step) {
    const CommCase& c = cases[step];
    const std::size_t block = block_bytes(c);
    switch (c.collective) {
      case Collective::AllReduce:
      case Collective::Reduce:
      case Collective::ReduceScatter: {
        const std::size_t elements =
            c.count * (c.collective == Collective::ReduceScatter ? ranks : 1);
        fill_reduction_inputs(*c.format, c.op, seed_of(c), elements, inputs);
        for (std::size_t r = 0; r < ranks; ++r) {
          send[r] = inputs[r];
          recv[r].assign(c.in_place ? 0 : block, std::byte{0xa5});
        }
        break;
      }
      case Collective::Broadcast:
        for (std::size_t r = 0; r < ranks; ++r) {
          inputs[r] = random_bits(*c.format, seed_of(c) + r, c.count);
          send[r] = inputs[r];
          recv[r].assign(block, std::byte{0xa5});
        }
        if (c.in_place)
          recv[static_cast<std::size_t>(c.root)] = inputs[static_cast<std::size_t>(c.root)];
        break;
      case Collective::AllGather:
        for (std::size_t r = 0; r < ranks; ++r) {
          inputs[r] = random_bits(*c.format, seed_of(c) + r, c.count);
          send[r] = inputs[r];
          recv[r].assign(block * ranks, std::byte{0xa5});
          if (c.in_place) std::memcpy(recv[r].data() + r * block, inputs[r].data(), block);
        }
        break;
    }
  };
  steps.run = [&](std::size_t step, int rank, CommEnv& env) {
    const CommCase& c = cases[step];
    const auto r = static_cast<std::size_t>(rank);
    const DataType type = c.format->type;
    std::byte* out = output(c, r);
    switch (c.collective) {
      case Collective::AllReduce:
        return env.comm.allreduce(send[r].data(), out, c.count, type, c.op, c.algorithm);
      case Collective::Broadcast:
        return env.comm.broadcast(rank != c.root ? nullptr
                                  : c.in_place   ? out
                                                 : send[r].data(),
                                  out, c.count, type, c.root);
      case Collective::AllGather:
        return env.comm.allgather(c.in_place ? out + r * block_bytes(c) : send[r].data(), out,
                                  c.count, type);
      case Collective::Reduce:
        return env.comm.reduce(send[r].data(), rank == c.root ? out : nullptr, c.count, type, c.op,
                               c.root);
      case Collective::ReduceScatter:
        return env.comm.reduce_scatter(send[r].data(), out, c.count, type, c.op);
    }
  };
  steps.check = [&](std::size_t step) {
    const CommCase& c = cases[step];
    const Format& f = *c.format;
    const std::size_t block = block_bytes(c);
    Findings findings(where + describe(c) + ", ");
    switch (c.collective) {
      case Collective::AllReduce:
        check_allreduce(
            f, c.op, seed_of(c), inputs, [&](std::size_t r) { return output(c, r); }, c.count,
            findings);
        break;
      case Collective::Reduce:
        check_reduction(f, c.op, seed_of(c), inputs, output(c, static_cast<std::size_t>(c.root)), 0,
                        c.count, "rank " + std::to_string(c.root), findings);
        break;
      case Collective::ReduceScatter:
        for (std::size_t r = 0; r < ranks; ++r) {
          check_reduction(f, c.op, seed_of(c), inputs, output(c, r), r * c.count, c.count,
                          "rank " + std::to_string(r), findings);
        }
        break;
      case Collective::Broadcast:
      case Collective::AllGather:
        for (std::size_t r = 0; r < ranks; ++r) {
          const bool gather = c.collective == Collective::AllGather;
          for (std::size_t owner = 0; owner < ranks; ++owner) {
            if (!gather && owner != static_cast<std::size_t>(c.root)) continue;
            check_copy(
                f, inputs[owner].data(), recv[r].data() + (gather ? owner * block : 0), c.count,
                "rank " + std::to_string(r) + " unlike rank " + std::to_string(owner) + "'s input",
                findings);
          }
        }
        break;
    }
    for (std::size_t r = 0; r < ranks; ++r) {  // inputs read, not written
      const bool written =
          c.in_place &&
          (c.collective == Collective::ReduceScatter || c.collective == Collective::AllReduce ||
           (c.collective == Collective::Reduce && r == static_cast<std::size_t>(c.root)));
      if (!written && send[r] != inputs[r]) {
        findings.add("send buffer", "rank " + std::to_string(r) + "'s changed");
      }
    }
    findings.flush(failures);
  };

  std::vector<std::string> errors;
  {
    // Segments of 256 bytes, so that 1003 elements pipeline; a deadlock fails within 20 s.
    const ScopedEnv env{
        {"COLL_TRANSPORT", "inproc"}, {"COLL_SEGMENT_BYTES", "256"}, {"COLL_TIMEOUT", "20"}};
    coll::StoreServer store("127.0.0.1", 0, coll::make_job_token());
    errors =
        step_together<CommEnv>(n, steps, [&](int rank, const std::function<void(CommEnv&)>& body) {
          const auto comm = coll::Comm::from_store(store.address(), store.token(), rank, n);
          CommEnv comm_env{*comm};
          body(comm_env);
        });
  }
  for (const std::string& error : errors) ADD_FAILURE() << where << error;
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
}

INSTANTIATE_TEST_SUITE_P(Communicator, CrossRankComm, ::testing::Values(3, 5),
                         [](const auto& ranks) { return std::to_string(ranks.param) + "ranks"; });

}  // namespace
