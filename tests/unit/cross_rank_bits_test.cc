// Every rank computes the same bits (docs/algorithms.md, docs/collectives.md: each reduction
// happens in one fixed order), checked on data that is not exact: random fractional and negative
// values, subnormals, +-0, +-inf and NaNs (quiet and signalling, assorted payloads and signs), in
// float16, bfloat16, float32 and float64, for every op. Ranks are threads over the in-process
// transport:
// - Registry/CrossRankBits: every registered all-reduce algorithm (skipped, with the reason,
//   where this process cannot run it) through its context, at 2, 3, 4, 5 and 8 ranks on one node
//   or several (uneven) nodes, plus hierarchical's other levels and the parameter server's other
//   server placements at 5 and 8 ranks;
// - Collectives/CrossRankCollectives: broadcast, all-gather, reduce and reduce-scatter likewise;
// - Communicator/CrossRankComm: every algorithm and collective through coll::Comm (one node), as
//   applications call them, with the argument check carried in their messages or node slots;
// - CrossRankReference: the reference itself rejects what it must.
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
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "algorithms/registry.hpp"
#include "bootstrap/store_server.hpp"
#include "coll/comm.hpp"
#include "collectives/collectives.hpp"
#include "inproc_rank.hpp"
#include "transport/inproc_transport.hpp"

namespace {

using coll::DataType;
using coll::ReduceOp;

constexpr std::uint64_t kDefaultSeed = 0x46c0ffee2026ull;

std::uint64_t seed() {
  static const std::uint64_t value = [] {
    const char* text = std::getenv("COLL_CROSS_RANK_SEED");
    return text && *text ? std::strtoull(text, nullptr, 0) : kDefaultSeed;
  }();
  return value;
}

std::string seed_text() {
  char text[64];
  std::snprintf(text, sizeof text, "COLL_CROSS_RANK_SEED=0x%" PRIx64, seed());
  return text;
}

std::string hex(std::uint64_t bits, int bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%0*" PRIx64, bytes * 2, bits);
  return text;
}

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
  std::string_view name() const { return coll::dtype_name(type); }
};

const Format kFloat16{DataType::Float16, 2, 10, 5, 0x1p-24L, 0x1p-11L};
const Format kBfloat16{DataType::Bfloat16, 2, 7, 8, 0x1p-133L, 0x1p-8L};
const Format kFloat32{DataType::Float32, 4, 23, 8, 0x1p-149L, 0x1p-24L};
const Format kFloat64{DataType::Float64, 8, 52, 11, 0x1p-1074L, 0x1p-53L};
const Format* const kFormats[] = {&kFloat16, &kBfloat16, &kFloat32, &kFloat64};

// Fixed-size copies (little-endian, as x86-64 and AArch64 Linux): these run for every element.
std::uint64_t load(const Format& f, const std::byte* data, std::size_t index) {
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

void store(const Format& f, std::byte* data, std::size_t index, std::uint64_t bits) {
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

struct Value {
  long double v;  // +-inf for infinities; 0 for NaN
  bool nan;
  bool inf;
  bool zero;
  bool negative;  // the sign bit
};

// From the definition of the format: (-1)^s * 2^(e - bias) * 1.m, or 2^(1 - bias) * 0.m.
long double decode_by_definition(const Format& f, std::uint64_t bits) {
  const std::uint64_t e = (bits & f.exp_mask()) >> f.man_bits;
  const std::uint64_t m = bits & f.man_mask();
  const long double sign = (bits & f.sign_bit()) ? -1.0L : 1.0L;
  if (e == 0) return sign * std::ldexp(static_cast<long double>(m), 1 - f.bias() - f.man_bits);
  const std::uint64_t significand = m | (std::uint64_t{1} << f.man_bits);
  return sign * std::ldexp(static_cast<long double>(significand),
                           static_cast<int>(e) - f.bias() - f.man_bits);
}

Value decode(const Format& f, std::uint64_t bits) {
  Value value{0, false, false, false, (bits & f.sign_bit()) != 0};
  const std::uint64_t e = bits & f.exp_mask();
  const std::uint64_t m = bits & f.man_mask();
  if (e == f.exp_mask()) {
    value.nan = m != 0;
    value.inf = m == 0;
    if (value.inf) {
      value.v = value.negative ? -std::numeric_limits<long double>::infinity()
                               : std::numeric_limits<long double>::infinity();
    }
    return value;
  }
  value.zero = e == 0 && m == 0;
  switch (f.type) {
    case DataType::Float16: {  // every finite float16, once, by the definition
      static const std::vector<long double> table = [] {
        std::vector<long double> all(1u << 16);
        for (std::uint32_t b = 0; b < all.size(); ++b) all[b] = decode_by_definition(kFloat16, b);
        return all;
      }();
      value.v = table[bits];
      break;
    }
    case DataType::Bfloat16:  // the top half of a float32
      value.v = std::bit_cast<float>(static_cast<std::uint32_t>(bits << 16));
      break;
    case DataType::Float32:
      value.v = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
      break;
    default:
      value.v = std::bit_cast<double>(bits);
  }
  return value;
}

// ---- Inputs: reproducible from (seed, case, element, rank) ----

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Rng {
  std::uint64_t state;
  std::uint64_t next() { return mix(state += 0x9e3779b97f4a7c15ull); }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  bool coin() { return (next() & 1) != 0; }
};

// A random sign, exponent in [min_exp, max_exp) and fraction, from one draw (the fraction takes
// the low bits, the sign the top one, the exponent the 8 below it).
std::uint64_t finite(const Format& f, Rng& rng, int min_exp, int max_exp) {
  const std::uint64_t draw = rng.next();
  const std::uint64_t sign = (draw >> 63) ? f.sign_bit() : 0;
  const auto span = static_cast<std::uint64_t>(max_exp - min_exp);
  const int e = min_exp + static_cast<int>(((draw >> 55) & 0xff) % span);
  return sign | (static_cast<std::uint64_t>(e + f.bias()) << f.man_bits) | (draw & f.man_mask());
}
std::uint64_t subnormal(const Format& f, Rng& rng) {
  return (rng.coin() ? f.sign_bit() : 0) | (1 + rng.below(f.man_mask()));
}
std::uint64_t zero(const Format& f, bool negative) {
  return negative ? f.sign_bit() : 0;
}
std::uint64_t infinity(const Format& f, bool negative) {
  return (negative ? f.sign_bit() : 0) | f.exp_mask();
}
std::uint64_t a_nan(const Format& f, Rng& rng) {  // quiet or signalling, any payload, either sign
  const std::uint64_t sign = rng.coin() ? f.sign_bit() : 0;
  const std::uint64_t low = f.quiet_bit() - 1;
  const std::uint64_t payload =
      rng.coin() ? f.quiet_bit() | (rng.next() & low) : 1 + rng.below(low);  // signalling: != 0
  return sign | f.exp_mask() | payload;
}

// What an element holds across the ranks. The first elements of a tensor take each kind in
// turn (so that even 1 element sees them all across the cases), the rest are drawn.
enum class Kind { Random, Subnormals, Zeros, OneZero, Infinities, InfinityAndZero, Nan, TwoNans };
constexpr int kKinds = 8;
const char* const kKindNames[kKinds] = {"random",     "subnormals",        "zeros", "one zero",
                                        "infinities", "infinity and zero", "NaN",   "two NaNs"};

std::uint64_t case_seed(std::uint64_t salt, const Format& f, ReduceOp op, std::size_t count,
                        int ranks) {
  return mix(seed() ^ mix(salt ^ mix((std::uint64_t(f.type) << 48) ^ (std::uint64_t(op) << 40) ^
                                     (std::uint64_t(ranks) << 32) ^ count)));
}

Kind kind_of(std::uint64_t seed_of_case, std::size_t element) {
  if (element < kKinds) return Kind((element + seed_of_case) % kKinds);
  const std::uint64_t draw = mix(seed_of_case ^ mix(element)) % 100;
  const int weights[kKinds] = {55, 12, 8, 5, 8, 4, 5, 3};
  std::uint64_t edge = 0;
  for (int k = 0; k < kKinds; ++k) {
    edge += static_cast<std::uint64_t>(weights[k]);
    if (draw < edge) return Kind(k);
  }
  return Kind::Random;
}

// Every rank's input at `element` (bits[rank]). Random values are fractional and of either sign,
// 2^-8 <= |x| < 2^8 (2^-1 <= |x| < 2 for prod, so that products neither overflow nor underflow);
// next to subnormals they are the smallest normals, so that sums cross the boundary.
void element_inputs(const Format& f, ReduceOp op, std::uint64_t seed_of_case, std::size_t element,
                    int ranks, std::uint64_t* bits) {
  Rng rng{mix(seed_of_case ^ mix(element + 0x51ed))};
  const bool prod = op == ReduceOp::Prod;
  const int low = prod ? -1 : -8, high = prod ? 1 : 8;
  const auto n = static_cast<std::uint64_t>(ranks);
  for (int r = 0; r < ranks; ++r) bits[r] = finite(f, rng, low, high);
  const auto some_rank = [&] { return static_cast<int>(rng.below(n)); };
  const auto other_rank = [&](int than) {
    return static_cast<int>((static_cast<std::uint64_t>(than) + 1 + rng.below(n - 1)) % n);
  };
  switch (kind_of(seed_of_case, element)) {
    case Kind::Random:
      break;
    case Kind::Subnormals: {
      const bool all = rng.below(3) == 0;
      for (int r = 0; r < ranks; ++r) {
        if (all || rng.coin()) {
          bits[r] = subnormal(f, rng);
        } else if (!prod) {
          bits[r] = finite(f, rng, 1 - f.bias(), 3 - f.bias());
        }
      }
      break;
    }
    case Kind::Zeros: {
      const std::uint64_t signs = rng.below(3);  // all -0, all +0, mixed
      for (int r = 0; r < ranks; ++r) bits[r] = zero(f, signs == 0 || (signs == 2 && rng.coin()));
      break;
    }
    case Kind::OneZero:
      bits[some_rank()] = zero(f, rng.coin());
      break;
    case Kind::Infinities: {
      const int first = some_rank();
      bits[first] = infinity(f, rng.coin());
      if (rng.coin()) bits[other_rank(first)] = infinity(f, rng.coin());
      break;
    }
    case Kind::InfinityAndZero: {
      const int first = some_rank();
      bits[first] = infinity(f, rng.coin());
      bits[other_rank(first)] = zero(f, rng.coin());
      break;
    }
    case Kind::Nan: {
      const int first = some_rank();
      bits[first] = a_nan(f, rng);
      if (rng.coin()) bits[other_rank(first)] = infinity(f, rng.coin());
      break;
    }
    case Kind::TwoNans: {
      const int first = some_rank();
      bits[first] = a_nan(f, rng);
      std::uint64_t second = a_nan(f, rng);
      while (second == bits[first]) second = a_nan(f, rng);
      bits[other_rank(first)] = second;
      break;
    }
  }
}

// Rank r's inputs for elements [0, count) into inputs[r].
void fill_reduction_inputs(const Format& f, ReduceOp op, std::uint64_t seed_of_case,
                           std::size_t count, std::vector<std::vector<std::byte>>& inputs) {
  const int ranks = static_cast<int>(inputs.size());
  std::vector<std::uint64_t> bits(inputs.size());
  for (auto& input : inputs) input.assign(count * static_cast<std::size_t>(f.bytes), std::byte{0});
  for (std::size_t i = 0; i < count; ++i) {
    element_inputs(f, op, seed_of_case, i, ranks, bits.data());
    for (int r = 0; r < ranks; ++r)
      store(f, inputs[static_cast<std::size_t>(r)].data(), i, bits[r]);
  }
}

// Values that only move: random bit patterns (every class of value of the type, signalling NaNs
// included), the first ones each special value.
std::vector<std::byte> random_bits(const Format& f, std::uint64_t seed_of_case, std::size_t count) {
  std::vector<std::byte> data(count * static_cast<std::size_t>(f.bytes));
  Rng rng{seed_of_case};
  const std::uint64_t mask =
      f.bytes == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (f.bytes * 8)) - 1;
  const std::uint64_t special[] = {zero(f, true),
                                   infinity(f, false),
                                   infinity(f, true),
                                   f.exp_mask() | 1,  // signalling NaN
                                   f.exp_mask() | f.quiet_bit() | f.sign_bit(),
                                   1};
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t k = (i + seed_of_case) % std::size(special);
    store(f, data.data(), i, i < std::size(special) ? special[k] : rng.next() & mask);
  }
  return data;
}

// ---- The reference ----

// Why `result` is not what `op` over `inputs` may give within the bound (see the top), or ""
// where it may.
std::string judge(const Format& f, ReduceOp op, const std::uint64_t* inputs, int n,
                  std::uint64_t result) {
  constexpr int kMaxRanks = 16;
  if (n > kMaxRanks) return "more ranks than the reference takes";
  Value x[kMaxRanks];
  for (int i = 0; i < n; ++i) x[i] = decode(f, inputs[i]);
  const Value r = decode(f, result);
  bool any_nan = false, pos_inf = false, neg_inf = false, all_zero = true, all_negative_zero = true;
  bool any_zero = false, sign = false;
  long double sum = 0, magnitude = 0, product = 1;
  for (int i = 0; i < n; ++i) {
    any_nan |= x[i].nan;
    pos_inf |= x[i].inf && !x[i].negative;
    neg_inf |= x[i].inf && x[i].negative;
    all_zero &= x[i].zero;
    all_negative_zero &= x[i].zero && x[i].negative;
    any_zero |= x[i].zero;
    sign ^= x[i].negative;
    if (!x[i].nan && !x[i].inf) {
      sum += x[i].v;
      magnitude += std::fabs(x[i].v);
      product *= x[i].v;
    }
  }
  const auto got = [&] { return hex(result, f.bytes); };
  const auto expect_bits = [&](std::uint64_t bits, const char* what) -> std::string {
    if (result == bits) return "";
    return std::string("expected ") + what + " " + hex(bits, f.bytes) + ", got " + got();
  };
  const auto expect_nan = [&]() -> std::string {
    return r.nan ? "" : "expected NaN, got " + got();
  };
  const auto within = [&](long double expected, long double tolerance) -> std::string {
    if (!r.nan && !r.inf && std::fabs(r.v - expected) <= tolerance) return "";
    std::ostringstream text;
    text.precision(21);
    text << "expected " << expected << " within " << tolerance << ", got " << got() << " = "
         << (r.nan ? std::numeric_limits<long double>::quiet_NaN() : r.v);
    return text.str();
  };
  const long double u = f.unit_roundoff;
  const auto gamma = [&](int k) { return k * u / (1 - k * u); };
  const long double reference_error = n * 0x1p-63L;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: {
      if (any_nan) return expect_nan();
      if (pos_inf && neg_inf) return expect_nan();
      if (pos_inf) return expect_bits(infinity(f, false), "+inf");
      if (neg_inf) return expect_bits(infinity(f, true), "-inf");
      if (all_zero) return expect_bits(zero(f, all_negative_zero), "a zero");
      if (op == ReduceOp::Sum) {
        return within(sum, gamma(n - 1) * magnitude + reference_error * magnitude);
      }
      return within(sum / n,
                    gamma(n) * magnitude / n + f.denorm_min / 2 + reference_error * magnitude);
    }
    case ReduceOp::Prod: {
      if (any_nan || ((pos_inf || neg_inf) && any_zero)) return expect_nan();
      if (pos_inf || neg_inf) return expect_bits(infinity(f, sign), "an infinity");
      if (any_zero) return expect_bits(zero(f, sign), "a zero");
      if (r.negative != sign && !r.nan)
        return "expected the sign bit " + std::to_string(sign) + ", got " + got();
      return within(product, gamma(n - 1) * std::fabs(product) + n * std::ldexp(f.denorm_min, n) +
                                 reference_error * std::fabs(product));
    }
    case ReduceOp::Max:
    case ReduceOp::Min: {
      const bool max = op == ReduceOp::Max;
      long double best = max ? -std::numeric_limits<long double>::infinity()
                             : std::numeric_limits<long double>::infinity();
      bool is_input = false;
      for (int i = 0; i < n; ++i) {
        if (x[i].nan) continue;
        best = max ? std::max(best, x[i].v) : std::min(best, x[i].v);
        is_input |= inputs[i] == result;
      }
      if (any_nan && r.nan) return "";
      if (r.nan) return "expected no NaN, got " + got();
      if (!is_input) return "expected one of the inputs, got " + got();
      if (any_nan ? (max ? r.v <= best : r.v >= best) : r.v == best) return "";
      std::ostringstream text;
      text.precision(21);
      text << "expected " << (any_nan ? (max ? "at most " : "at least ") : "") << best << ", got "
           << got() << " = " << r.v;
      return text.str();
    }
  }
  return "unknown op";
}

// The reference rejects what the bound and IEEE rule out (and accepts what they allow): a check
// that cannot fail would pass every algorithm.
TEST(CrossRankReference, AcceptsWhatTheBoundAllowsAndRejectsTheRest) {
  const auto ok = [](const Format& f, ReduceOp op, std::vector<std::uint64_t> inputs,
                     std::uint64_t result) {
    return judge(f, op, inputs.data(), static_cast<int>(inputs.size()), result);
  };
  // float32 1 + 2^-24: both neighbours are within one rounding, two ulps away is not.
  EXPECT_EQ(ok(kFloat32, ReduceOp::Sum, {0x3f800000, 0x33800000}, 0x3f800000), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Sum, {0x3f800000, 0x33800000}, 0x3f800001), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Sum, {0x3f800000, 0x33800000}, 0x3f800002), "");
  // Subnormal sums are exact; the reference keeps subnormal float64 (long double's range).
  EXPECT_EQ(ok(kFloat16, ReduceOp::Sum, {0x0001, 0x0001, 0x8003}, 0x8001), "");
  EXPECT_NE(ok(kFloat16, ReduceOp::Sum, {0x0001, 0x0001, 0x8003}, 0x8000), "");
  EXPECT_EQ(ok(kFloat64, ReduceOp::Sum, {1, 2}, 3), "");
  EXPECT_NE(ok(kFloat64, ReduceOp::Sum, {1, 2}, 4), "");
  // Zeros: -0 only when every one is -0.
  EXPECT_EQ(ok(kBfloat16, ReduceOp::Sum, {0x8000, 0x8000}, 0x8000), "");
  EXPECT_NE(ok(kBfloat16, ReduceOp::Sum, {0x8000, 0x8000}, 0x0000), "");
  EXPECT_NE(ok(kBfloat16, ReduceOp::Sum, {0x8000, 0x0000}, 0x8000), "");
  // Infinities and NaN.
  EXPECT_EQ(ok(kFloat32, ReduceOp::Sum, {0x7f800000, 0xff800000}, 0xffc00000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Sum, {0x7f800000, 0xff800000}, 0x7f800000), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Sum, {0x7f800000, 0x3f800000}, 0x7f800000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Avg, {0x7f800000, 0x3f800000}, 0x7f7fffff), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Sum, {0x7f800001, 0x3f800000}, 0x3f800000), "");
  EXPECT_EQ(ok(kFloat16, ReduceOp::Prod, {0x7c00, 0x0000}, 0x7e00), "");
  EXPECT_NE(ok(kFloat16, ReduceOp::Prod, {0x7c00, 0x0000}, 0x7c00), "");
  EXPECT_EQ(ok(kFloat16, ReduceOp::Prod, {0xfc00, 0x3c00}, 0xfc00), "");
  EXPECT_NE(ok(kFloat16, ReduceOp::Prod, {0xfc00, 0x3c00}, 0x7c00), "");
  // A product's sign; an average's one more rounding (float64 (1 + 2) / 2: 1.5 + 1 ulp is
  // within 3u, 2 ulps are not).
  EXPECT_EQ(ok(kFloat32, ReduceOp::Prod, {0xbfc00000, 0x3fc00000}, 0xc0100000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Prod, {0xbfc00000, 0x3fc00000}, 0x40100000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Prod, {0x80000000, 0x3fc00000}, 0x00000000), "");
  EXPECT_EQ(
      ok(kFloat64, ReduceOp::Avg, {0x3ff0000000000000, 0x4000000000000000}, 0x3ff8000000000001),
      "");
  EXPECT_NE(
      ok(kFloat64, ReduceOp::Avg, {0x3ff0000000000000, 0x4000000000000000}, 0x3ff8000000000002),
      "");
  // Min and max: exact, one of the inputs; with a NaN, NaN or not beyond the others' extreme.
  EXPECT_EQ(ok(kFloat32, ReduceOp::Max, {0x80000000, 0x00000000}, 0x80000000), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Max, {0x80000000, 0x00000000}, 0x00000000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Max, {0x00000000, 0x00000000}, 0x80000000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Min, {0x3f800000, 0x40000000}, 0x40000000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Min, {0x3f800000, 0x40000000}, 0x7fc00000), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Min, {0x7fc00001, 0x3f800000, 0x40000000}, 0x7fc00001), "");
  EXPECT_EQ(ok(kFloat32, ReduceOp::Min, {0x7fc00001, 0x3f800000, 0x40000000}, 0x40000000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Min, {0x7fc00001, 0x40000000, 0x40400000}, 0x3f800000), "");
  EXPECT_NE(ok(kFloat32, ReduceOp::Max, {0x7fc00001, 0x3f800000, 0x40000000}, 0x40400000), "");
}

// ---- Ranks as threads, stepping through cases together ----

using coll::testing::node_map;

std::string placement(int ranks, bool one_node) {
  const std::vector<int> nodes = node_map(ranks, one_node);
  return std::to_string(ranks) + " ranks on " + std::to_string(nodes.back() + 1) +
         (nodes.back() == 0 ? " node" : " nodes");
}

using RankEnv = coll::testing::InprocRank;

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
std::vector<std::string> run_on_rank_threads(int ranks, bool one_node, const Steps& steps) {
  const auto world = coll::InprocWorld::create(ranks);
  const std::vector<int> node_of_rank = node_map(ranks, one_node);
  return step_together<RankEnv>(
      ranks, steps, [&](int rank, const std::function<void(RankEnv&)>& body) {
        RankEnv env(*world, rank, 20, node_of_rank);  // 20 s: a deadlock fails the test
        body(env);
      });
}

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

std::string inputs_text(const Format& f, const std::uint64_t* inputs, int n) {
  std::string text = "inputs by rank [";
  for (int r = 0; r < n; ++r) text += (r ? " " : "") + hex(inputs[r], f.bytes);
  return text + "]";
}

// Checks element by element of `result` (elements [first, first + count) of the tensor that
// `inputs` hold) against the reference.
void check_reduction(const Format& f, ReduceOp op, std::uint64_t seed_of_case,
                     const std::vector<std::vector<std::byte>>& inputs, const std::byte* result,
                     std::size_t first, std::size_t count, const std::string& who,
                     Findings& findings) {
  const int n = static_cast<int>(inputs.size());
  std::vector<std::uint64_t> bits(inputs.size());
  for (std::size_t i = 0; i < count; ++i) {
    for (int r = 0; r < n; ++r)
      bits[r] = load(f, inputs[static_cast<std::size_t>(r)].data(), first + i);
    const std::uint64_t got = load(f, result, i);
    std::string why = judge(f, op, bits.data(), n, got);
    if (!why.empty()) {
      findings.add(who + " against the reference",
                   "element " + std::to_string(first + i) + " (" +
                       kKindNames[int(kind_of(seed_of_case, first + i))] + "): " + why + "; " +
                       inputs_text(f, bits.data(), n));
    }
  }
}

// An all-reduce's results (output(r): rank r's): rank 0's against the reference, every other
// rank's against rank 0's bits, each difference judged against the reference too.
void check_allreduce(const Format& f, ReduceOp op, std::uint64_t seed_of_case,
                     const std::vector<std::vector<std::byte>>& inputs,
                     const std::function<const std::byte*(std::size_t)>& output, std::size_t count,
                     Findings& findings) {
  const int n = static_cast<int>(inputs.size());
  const std::size_t bytes = count * static_cast<std::size_t>(f.bytes);
  check_reduction(f, op, seed_of_case, inputs, output(0), 0, count, "rank 0", findings);
  std::vector<std::uint64_t> bits(inputs.size());
  for (std::size_t r = 1; r < inputs.size(); ++r) {
    if (std::memcmp(output(r), output(0), bytes) == 0) continue;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t mine = load(f, output(r), i), first = load(f, output(0), i);
      if (mine == first) continue;
      for (std::size_t q = 0; q < inputs.size(); ++q) bits[q] = load(f, inputs[q].data(), i);
      const std::string why = judge(f, op, bits.data(), n, mine);
      findings.add("rank " + std::to_string(r) + " unlike rank 0",
                   "element " + std::to_string(i) + " (" +
                       kKindNames[int(kind_of(seed_of_case, i))] + "): rank 0 " +
                       hex(first, f.bytes) + ", rank " + std::to_string(r) + " " +
                       hex(mine, f.bytes) + " (" +
                       (why.empty() ? "also within the bound" : "against the reference: " + why) +
                       "); " + inputs_text(f, bits.data(), n));
    }
  }
}

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

coll::Tuning segments(std::size_t local, std::size_t across_nodes) {
  coll::Tuning tuning;
  tuning.segment_bytes = local;
  tuning.net_segment_bytes = across_nodes;
  return tuning;
}

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

class CrossRankBits : public ::testing::TestWithParam<Shape> {
 public:
  static void SetUpTestSuite() { std::printf("[   seed   ] %s\n", seed_text().c_str()); }
};

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
    tuning.hier_intra = shape.variant.hier_intra;
    tuning.hier_inter = shape.variant.hier_inter;
    tuning.ps_servers = shape.variant.ps_servers;
    tuning.ps_dedicated = shape.variant.ps_dedicated;
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

// ---- Broadcast, all-gather, reduce, reduce-scatter ----

struct Placement {
  int ranks;
  bool one_node;
};

void PrintTo(const Placement& shape, std::ostream* out) {
  *out << placement(shape.ranks, shape.one_node);
}

class CrossRankCollectives : public ::testing::TestWithParam<Placement> {
 public:
  static void SetUpTestSuite() { std::printf("[   seed   ] %s\n", seed_text().c_str()); }

 protected:
  void report(const std::vector<std::string>& errors, const std::vector<std::string>& failures) {
    for (const std::string& error : errors) ADD_FAILURE() << where() << error;
    for (const std::string& failure : failures) ADD_FAILURE() << failure;
  }
  std::string where() const {
    return "[" + seed_text() + "] " + placement(GetParam().ranks, GetParam().one_node) + ", ";
  }
};

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

// Bit for bit: broadcast from the first and the last rank, in and out of place (at the root).
TEST_P(CrossRankCollectives, BroadcastCopiesEveryBit) {
  const int n = GetParam().ranks;
  SCOPED_TRACE(seed_text());
  std::vector<CopyCase> cases;
  for (const Format* f : kFormats) {
    for (std::size_t count : {1, 7, 1003, 65537}) {
      for (int root : {0, n - 1}) {
        for (bool in_place : {false, true}) {
          cases.push_back({f, count, root, in_place,
                           count > 2000 ? segments(4 << 10, 8 << 10) : segments(256, 512)});
        }
      }
    }
  }
  std::vector<std::byte> source;
  std::vector<std::vector<std::byte>> recv(static_cast<std::size_t>(n));
  std::vector<std::byte> root_send;
  std::vector<std::string> failures;
  Steps steps;
  steps.count = cases.size();
  steps.describe = [&](std::size_t step) { return describe(cases[step], "broadcast"); };
  steps.prepare = [&](std::size_t step) {
    const CopyCase& c = cases[step];
    source = random_bits(*c.format, case_seed(2, *c.format, ReduceOp::Sum, c.count, n) + c.root,
                         c.count);
    for (auto& buffer : recv) buffer.assign(source.size(), std::byte{0xa5});
    root_send = source;
    if (c.in_place) recv[static_cast<std::size_t>(c.root)] = source;
  };
  steps.run = [&](std::size_t step, int rank, RankEnv& env) {
    const CopyCase& c = cases[step];
    void* data = recv[static_cast<std::size_t>(rank)].data();
    if (rank == c.root && !c.in_place) std::memcpy(data, root_send.data(), root_send.size());
    coll::chain_broadcast(env.context(c.tuning), data, c.count, c.format->type, c.root);
  };
  steps.check = [&](std::size_t step) {
    const CopyCase& c = cases[step];
    Findings findings(where() + describe(c, "broadcast") + ", ");
    for (int r = 0; r < n; ++r) {
      const auto& got = recv[static_cast<std::size_t>(r)];
      for (std::size_t i = 0; i < c.count; ++i) {
        const std::uint64_t want = load(*c.format, source.data(), i);
        const std::uint64_t have = load(*c.format, got.data(), i);
        if (want != have) {
          findings.add("rank " + std::to_string(r) + " unlike the root's input",
                       "element " + std::to_string(i) + ": " + hex(want, c.format->bytes) +
                           " became " + hex(have, c.format->bytes));
        }
      }
    }
    if (root_send != source) findings.add("send buffer", "the root's changed");
    findings.flush(failures);
  };
  report(run_on_rank_threads(n, GetParam().one_node, steps), failures);
}

// Bit for bit: every rank's block in every rank's result, in and out of place.
TEST_P(CrossRankCollectives, AllGatherCopiesEveryBit) {
  const int n = GetParam().ranks;
  const auto ranks = static_cast<std::size_t>(n);
  SCOPED_TRACE(seed_text());
  std::vector<CopyCase> cases;
  for (const Format* f : kFormats) {
    for (std::size_t count : {1, 7, 1003, 8193}) {
      for (bool in_place : {false, true}) {
        cases.push_back({f, count, -1, in_place,
                         count > 2000 ? segments(4 << 10, 8 << 10) : segments(256, 512)});
      }
    }
  }
  std::vector<std::vector<std::byte>> inputs(ranks), send(ranks), recv(ranks);
  std::vector<std::string> failures;
  Steps steps;
  steps.count = cases.size();
  steps.describe = [&](std::size_t step) { return describe(cases[step], "all-gather"); };
  steps.prepare = [&](std::size_t step) {
    const CopyCase& c = cases[step];
    const std::size_t block = c.count * static_cast<std::size_t>(c.format->bytes);
    for (std::size_t r = 0; r < ranks; ++r) {
      inputs[r] =
          random_bits(*c.format, case_seed(3, *c.format, ReduceOp::Sum, c.count, n) + r, c.count);
      send[r] = inputs[r];
      recv[r].assign(block * ranks, std::byte{0xa5});
      if (c.in_place) std::memcpy(recv[r].data() + r * block, inputs[r].data(), block);
    }
  };
  steps.run = [&](std::size_t step, int rank, RankEnv& env) {
    const CopyCase& c = cases[step];
    const auto r = static_cast<std::size_t>(rank);
    const std::size_t block = c.count * static_cast<std::size_t>(c.format->bytes);
    const void* mine = c.in_place ? recv[r].data() + r * block : send[r].data();
    coll::ring_allgather(env.context(c.tuning), mine, recv[r].data(), c.count, c.format->type);
  };
  steps.check = [&](std::size_t step) {
    const CopyCase& c = cases[step];
    const Format& f = *c.format;
    Findings findings(where() + describe(c, "all-gather") + ", ");
    for (std::size_t r = 0; r < ranks; ++r) {
      for (std::size_t owner = 0; owner < ranks; ++owner) {
        for (std::size_t i = 0; i < c.count; ++i) {
          const std::uint64_t want = load(f, inputs[owner].data(), i);
          const std::uint64_t have = load(f, recv[r].data(), owner * c.count + i);
          if (want != have) {
            findings.add(
                "rank " + std::to_string(r) + " unlike rank " + std::to_string(owner) + "'s input",
                "element " + std::to_string(i) + ": " + hex(want, f.bytes) + " became " +
                    hex(have, f.bytes));
          }
        }
      }
      if (!c.in_place && send[r] != inputs[r]) {
        findings.add("send buffer", "rank " + std::to_string(r) + "'s changed");
      }
    }
    findings.flush(failures);
  };
  report(run_on_rank_threads(n, GetParam().one_node, steps), failures);
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

// The root's result within the bound of the reference: to the first and the last rank, in and
// out of place (at the root; the others pass no receive buffer).
TEST_P(CrossRankCollectives, ReduceIsWithinTheBoundOfTheReference) {
  const int n = GetParam().ranks;
  const auto ranks = static_cast<std::size_t>(n);
  SCOPED_TRACE(seed_text());
  std::vector<ReductionCase> cases;
  for (const Format* f : kFormats) {
    for (int o = 0; o < coll::kNumReduceOps; ++o) {
      for (std::size_t count : {1, 7, 1003}) {
        for (int root : {0, n - 1}) {
          for (bool in_place : {false, true}) {
            cases.push_back({f, ReduceOp(o), count, root, in_place, segments(256, 512)});
          }
        }
      }
    }
    cases.push_back({f, ReduceOp::Sum, 65537, n / 2, false, segments(4 << 10, 8 << 10)});
  }
  std::vector<std::vector<std::byte>> inputs(ranks), send(ranks);
  std::vector<std::byte> root_recv;
  std::vector<std::string> failures;
  Steps steps;
  steps.count = cases.size();
  steps.describe = [&](std::size_t step) { return describe(cases[step], "reduce"); };
  steps.prepare = [&](std::size_t step) {
    const ReductionCase& c = cases[step];
    fill_reduction_inputs(*c.format, c.op, case_seed(4, *c.format, c.op, c.count, n), c.count,
                          inputs);
    for (std::size_t r = 0; r < ranks; ++r) send[r] = inputs[r];
    root_recv.assign(c.in_place ? 0 : inputs[0].size(), std::byte{0xa5});
  };
  steps.run = [&](std::size_t step, int rank, RankEnv& env) {
    const ReductionCase& c = cases[step];
    std::byte* mine = send[static_cast<std::size_t>(rank)].data();
    void* out = rank != c.root ? nullptr : c.in_place ? mine : root_recv.data();
    coll::chain_reduce(env.context(c.tuning), mine, out, c.count, c.format->type, c.op, c.root);
  };
  steps.check = [&](std::size_t step) {
    const ReductionCase& c = cases[step];
    const auto root = static_cast<std::size_t>(c.root);
    Findings findings(where() + describe(c, "reduce") + ", ");
    check_reduction(*c.format, c.op, case_seed(4, *c.format, c.op, c.count, n), inputs,
                    c.in_place ? send[root].data() : root_recv.data(), 0, c.count,
                    "rank " + std::to_string(c.root), findings);
    for (std::size_t r = 0; r < ranks; ++r) {
      if ((r != root || !c.in_place) && send[r] != inputs[r]) {
        findings.add("send buffer", "rank " + std::to_string(r) + "'s changed");
      }
    }
    findings.flush(failures);
  };
  report(run_on_rank_threads(n, GetParam().one_node, steps), failures);
}

// Each rank's block within the bound of the reference, in and out of place.
TEST_P(CrossRankCollectives, ReduceScatterIsWithinTheBoundOfTheReference) {
  const int n = GetParam().ranks;
  const auto ranks = static_cast<std::size_t>(n);
  SCOPED_TRACE(seed_text());
  std::vector<ReductionCase> cases;
  for (const Format* f : kFormats) {
    for (int o = 0; o < coll::kNumReduceOps; ++o) {
      for (std::size_t count : {1, 7, 1003}) {
        for (bool in_place : {false, true}) {
          cases.push_back({f, ReduceOp(o), count, -1, in_place, segments(256, 512)});
        }
      }
    }
    cases.push_back({f, ReduceOp::Sum, 8193, -1, true, segments(4 << 10, 8 << 10)});
  }
  std::vector<std::vector<std::byte>> inputs(ranks), send(ranks), recv(ranks);
  std::vector<std::string> failures;
  Steps steps;
  steps.count = cases.size();
  steps.describe = [&](std::size_t step) { return describe(cases[step], "reduce-scatter"); };
  steps.prepare = [&](std::size_t step) {
    const ReductionCase& c = cases[step];
    fill_reduction_inputs(*c.format, c.op, case_seed(5, *c.format, c.op, c.count, n),
                          c.count * ranks, inputs);
    for (std::size_t r = 0; r < ranks; ++r) {
      send[r] = inputs[r];
      recv[r].assign(c.in_place ? 0 : c.count * static_cast<std::size_t>(c.format->bytes),
                     std::byte{0xa5});
    }
  };
  steps.run = [&](std::size_t step, int rank, RankEnv& env) {
    const ReductionCase& c = cases[step];
    const auto r = static_cast<std::size_t>(rank);
    const std::size_t block = c.count * static_cast<std::size_t>(c.format->bytes);
    void* out = c.in_place ? send[r].data() + r * block : recv[r].data();
    coll::ring_reduce_scatter_to(env.context(c.tuning), send[r].data(), out, c.count,
                                 c.format->type, c.op);
  };
  steps.check = [&](std::size_t step) {
    const ReductionCase& c = cases[step];
    const std::size_t block = c.count * static_cast<std::size_t>(c.format->bytes);
    Findings findings(where() + describe(c, "reduce-scatter") + ", ");
    for (std::size_t r = 0; r < ranks; ++r) {
      const std::byte* out = c.in_place ? send[r].data() + r * block : recv[r].data();
      check_reduction(*c.format, c.op, case_seed(5, *c.format, c.op, c.count, n), inputs, out,
                      r * c.count, c.count, "rank " + std::to_string(r), findings);
      if (!c.in_place && send[r] != inputs[r]) {
        findings.add("send buffer", "rank " + std::to_string(r) + "'s changed");
      }
    }
    findings.flush(failures);
  };
  report(run_on_rank_threads(n, GetParam().one_node, steps), failures);
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

class CrossRankComm : public ::testing::TestWithParam<int> {
 public:
  static void SetUpTestSuite() { std::printf("[   seed   ] %s\n", seed_text().c_str()); }
};

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
            const std::byte* got = recv[r].data() + (gather ? owner * block : 0);
            if (std::memcmp(got, inputs[owner].data(), block) == 0) continue;
            for (std::size_t i = 0; i < c.count; ++i) {
              const std::uint64_t want = load(f, inputs[owner].data(), i), have = load(f, got, i);
              if (want == have) continue;
              findings.add("rank " + std::to_string(r) + " unlike rank " + std::to_string(owner) +
                               "'s input",
                           "element " + std::to_string(i) + ": " + hex(want, f.bytes) + " became " +
                               hex(have, f.bytes));
            }
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
