// What the cross-rank bit tests share (cross_rank_bits.cc holds the bodies): every rank computes
// the same bits (docs/algorithms.md, docs/collectives.md: each reduction happens in one fixed
// order), checked on data that is not exact: random fractional and negative values, subnormals,
// +-0, +-inf and NaNs (quiet and signalling, assorted payloads and signs), in float16, bfloat16,
// float32 and float64, for every op. Ranks are threads over the in-process transport. The tests,
// a file each:
// - cross_rank_reference_test.cc, CrossRankReference: the reference itself rejects what it must;
// - cross_rank_bits_test.cc, Registry/CrossRankBits: every registered all-reduce algorithm
//   (skipped, with the reason, where this process cannot run it) through its context, at 2, 3, 4,
//   5 and 8 ranks on one node or several (uneven) nodes, plus hierarchical's other levels and the
//   parameter server's other server placements at 5 and 8 ranks;
// - cross_rank_collectives_test.cc, Collectives/CrossRankCollectives: broadcast, all-gather,
//   reduce and reduce-scatter likewise;
// - cross_rank_comm_test.cc, Communicator/CrossRankComm: every algorithm and collective through
//   coll::Comm (one node), as applications call them, with the argument check carried in their
//   messages or node slots.
//
// Checked:
// - all-reduce: every rank's result has rank 0's bits (memcmp, NaN payloads included: no
//   algorithm needs an exception); in place gives the bits out of place gives (registry); the
//   send buffer out of place is untouched; the result is within the error bound below of a long
//   double reference, with IEEE's special values;
// - broadcast, all-gather: every rank's result is the source's bits (random bit patterns, so
//   every class of value, signalling NaNs included);
// - reduce (root only) and reduce-scatter (each rank its block): the reference, as all-reduce.
//
// The error bound. Every algorithm reduces an element by n-1 binary operations in the element's
// type, in some fixed order (a chain, a ring, a tree); each operation is correctly rounded to the
// type: float16 and bfloat16 are widened to float32, operated on and rounded back
// (libcoll/src/reduce/reducer.hpp), and float32 has at least 2p+2 bits for their p (11, 8), so
// that double rounding is innocuous (Figueroa, 1995). Whatever the order, then (Higham,
// "Accuracy and Stability of Numerical Algorithms", 2nd ed., (4.4) and Lemma 3.1):
//   sum:  |r - s| <= g(n-1) * sum |x_i|,                 g(k) = k u / (1 - k u), u = 2^-p
//   avg:  |r - s/n| <= g(n) * sum |x_i| / n + dmin / 2   (one more rounding: the division)
//   prod: |r - p| <= g(n-1) * |p| + n 2^n dmin           (the dmin term: underflow into
//                                                         subnormals, at most dmin/2 per
//                                                         product, grown by the later factors,
//                                                         which are below 2 in magnitude)
//   min, max: exact (the result is one of the inputs)
// with dmin the type's smallest subnormal. A sum of two values is exact when it is subnormal, so
// the sum needs no such term. The reference itself (long double, 64-bit significand) adds up to
// n 2^-63 of the same magnitudes, allowed on top. Random values are small enough that no partial
// result overflows, so infinities and NaNs come only from the special inputs, where IEEE fixes
// the result whatever the order: any NaN gives NaN (sum, prod, avg), +inf with -inf gives NaN
// (sum, avg), inf with 0 gives NaN (prod), the sum of zeros is -0 only when every one is -0, a
// product's sign is the exclusive or of the signs. Min and max drop a NaN met in the running
// result (reducer.cc: `a < b ? a : b`, a NaN in b propagates, one in a does not), so where a NaN
// is among the inputs the result is NaN or one of the other inputs, not below the minimum
// (above the maximum), depending on the order.
//
// Seed: fixed (kDefaultSeed), printed by each test suite and in every failure message;
// COLL_CROSS_RANK_SEED=<n> runs another (decimal or 0x hex).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "coll/tuning.hpp"
#include "coll/types.hpp"
#include "inproc_rank.hpp"

namespace coll::testing::cross_rank {

constexpr std::uint64_t kDefaultSeed = 0x46c0ffee2026ull;

std::uint64_t seed();
std::string seed_text();
std::string hex(std::uint64_t bits, int bytes);

// A parameterized suite that prints the seed before its first test.
template <class Param>
class SeededSuite : public ::testing::TestWithParam<Param> {
 public:
  static void SetUpTestSuite() { std::printf("[   seed   ] %s\n", seed_text().c_str()); }
};

// ---- The four floating-point formats, described independently of libcoll's conversions ----

struct Format {
  DataType type;
  int bytes;
  int man_bits;  // stored fraction bits
  int exp_bits;

  int precision() const { return man_bits + 1; }
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  std::uint64_t sign_bit() const { return std::uint64_t{1} << (bytes * 8 - 1); }
  std::uint64_t exp_mask() const { return ((std::uint64_t{1} << exp_bits) - 1) << man_bits; }
  std::uint64_t man_mask() const { return (std::uint64_t{1} << man_bits) - 1; }
  std::uint64_t quiet_bit() const { return std::uint64_t{1} << (man_bits - 1); }
  long double denorm_min;     // 2^(1 - bias - man_bits)
  long double unit_roundoff;  // 2^-precision
  std::string_view name() const { return dtype_name(type); }
};

inline const Format kFloat16{DataType::Float16, 2, 10, 5, 0x1p-24L, 0x1p-11L};
inline const Format kBfloat16{DataType::Bfloat16, 2, 7, 8, 0x1p-133L, 0x1p-8L};
inline const Format kFloat32{DataType::Float32, 4, 23, 8, 0x1p-149L, 0x1p-24L};
inline const Format kFloat64{DataType::Float64, 8, 52, 11, 0x1p-1074L, 0x1p-53L};
inline const Format* const kFormats[] = {&kFloat16, &kBfloat16, &kFloat32, &kFloat64};

// Fixed-size copies (little-endian, as x86-64 and AArch64 Linux): these run for every element.
inline std::uint64_t load(const Format& f, const std::byte* data, std::size_t index) {
  switch (f.bytes) {
    case 2: {
      std::uint16_t bits;
      std::memcpy(&bits, data + index * 2, 2);
      return bits;
    }
    case 4: {
      std::uint32_t bits;
      std::memcpy(&bits, data + index * 4, 4);
      return bits;
    }
    default: {
      std::uint64_t bits;
      std::memcpy(&bits, data + index * 8, 8);
      return bits;
    }
  }
}

inline void store(const Format& f, std::byte* data, std::size_t index, std::uint64_t bits) {
  switch (f.bytes) {
    case 2: {
      const auto narrow = static_cast<std::uint16_t>(bits);
      std::memcpy(data + index * 2, &narrow, 2);
      return;
    }
    case 4: {
      const auto narrow = static_cast<std::uint32_t>(bits);
      std::memcpy(data + index * 4, &narrow, 4);
      return;
    }
    default:
      std::memcpy(data + index * 8, &bits, 8);
  }
}

// ---- Inputs: reproducible from (seed, case, element, rank) ----

// A case's seed: the salt tells the tests (and collectives) apart.
std::uint64_t case_seed(std::uint64_t salt, const Format& f, ReduceOp op, std::size_t count,
                        int ranks);

// Rank r's inputs for elements [0, count) into inputs[r]: each element's inputs across the ranks
// are random (fractional, of either sign) or a special mix (subnormals, zeros, infinities, NaNs).
void fill_reduction_inputs(const Format& f, ReduceOp op, std::uint64_t seed_of_case,
                           std::size_t count, std::vector<std::vector<std::byte>>& inputs);

// Values that only move: random bit patterns (every class of value of the type, signalling NaNs
// included), the first ones each special value.
std::vector<std::byte> random_bits(const Format& f, std::uint64_t seed_of_case, std::size_t count);

// ---- The reference ----

// Why `result` is not what `op` over `inputs` may give within the bound (see the top), or ""
// where it may.
std::string judge(const Format& f, ReduceOp op, const std::uint64_t* inputs, int n,
                  std::uint64_t result);

// ---- Ranks as threads, stepping through cases together ----

// "3 ranks on 2 nodes".
std::string placement(int ranks, bool one_node);

// A tuning with these segment sizes (on a node, across nodes).
Tuning segments(std::size_t local, std::size_t across_nodes);

using RankEnv = InprocRank;

template <class Env>
struct StepsOf {
  std::size_t count = 0;
  std::function<void(std::size_t)> prepare;         // alone, before the ranks run a step
  std::function<void(std::size_t, int, Env&)> run;  // on every rank
  std::function<void(std::size_t)> check;           // alone, after every rank ran it
  std::function<std::string(std::size_t)> describe;
};
using Steps = StepsOf<RankEnv>;

// Runs the steps on one thread per rank, each with the environment `with_env(rank, body)` makes
// and hands to `body`; returns what failed (exceptions: the steps' checks report their own
// failures).
template <class Env>
std::vector<std::string> step_together(
    int ranks, const StepsOf<Env>& steps,
    const std::function<void(int, const std::function<void(Env&)>&)>& with_env) {
  std::mutex mutex;
  std::vector<std::string> errors;
  const auto record = [&](std::string error) {
    const std::lock_guard lock(mutex);
    errors.push_back(std::move(error));
  };
  std::atomic<bool> failed{false};
  bool stop = false;  // written by the completion only, read after the barrier
  std::size_t phase = 0;
  const auto between_steps = [&]() noexcept {
    try {
      if (failed.load()) stop = true;
      if (phase > 0 && !stop) steps.check(phase - 1);
      if (phase < steps.count && !stop) steps.prepare(phase);
    } catch (const std::exception& error) {
      record(std::string("checking: ") + error.what());
      stop = true;
    }
    ++phase;
  };
  std::barrier sync(ranks, between_steps);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      std::size_t step = 0;  // the next barrier phase this rank arrives at
      try {
        with_env(rank, [&](Env& env) {
          for (; step <= steps.count; ++step) {
            sync.arrive_and_wait();
            if (step == steps.count || stop) continue;
            try {
              steps.run(step, rank, env);
            } catch (const std::exception& error) {
              record("rank " + std::to_string(rank) + ", " + steps.describe(step) + ": " +
                     error.what());
              failed = true;  // peers of this collective time out; no step runs after it
            }
          }
        });
      } catch (const std::exception& error) {  // making the environment failed
        record("rank " + std::to_string(rank) + ": " + error.what());
        failed = true;
      }
      for (; step <= steps.count; ++step) sync.arrive_and_wait();
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

// Ranks as threads of one in-process world, calling algorithms through their contexts.
std::vector<std::string> run_on_rank_threads(int ranks, bool one_node, const Steps& steps);

// ---- Checks ----

// Collects failures with their context, at most a few of each sort per case.
class Findings {
 public:
  explicit Findings(std::string prefix) : prefix_(std::move(prefix)) {}
  void add(const std::string& what, const std::string& text) {
    if (++count_[what] <= 4) lines_.push_back(prefix_ + what + ": " + text);
  }
  void flush(std::vector<std::string>& out) {
    for (const auto& [what, count] : count_) {
      if (count > 4) {
        lines_.push_back(prefix_ + what + ": " + std::to_string(count) + " in all");
      }
    }
    out.insert(out.end(), lines_.begin(), lines_.end());
  }

 private:
  std::string prefix_;
  std::map<std::string, std::size_t> count_;
  std::vector<std::string> lines_;
};

// Checks element by element of `result` (elements [first, first + count) of the tensor that
// `inputs` hold) against the reference.
void check_reduction(const Format& f, ReduceOp op, std::uint64_t seed_of_case,
                     const std::vector<std::vector<std::byte>>& inputs, const std::byte* result,
                     std::size_t first, std::size_t count, const std::string& who,
                     Findings& findings);

// An all-reduce's results (output(r): rank r's): rank 0's against the reference, every other
// rank's against rank 0's bits, each difference judged against the reference too.
void check_allreduce(const Format& f, ReduceOp op, std::uint64_t seed_of_case,
                     const std::vector<std::vector<std::byte>>& inputs,
                     const std::function<const std::byte*(std::size_t)>& output, std::size_t count,
                     Findings& findings);

// A copy, bit for bit: each of `count` elements of `got` that differs from `want`'s is a finding
// `what`.
void check_copy(const Format& f, const std::byte* want, const std::byte* got, std::size_t count,
                const std::string& what, Findings& findings);

}  // namespace coll::testing::cross_rank
