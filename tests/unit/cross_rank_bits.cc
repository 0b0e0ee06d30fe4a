// The bodies of cross_rank_bits.hpp's helpers: the formats decoded by their definition, the
// inputs' generators, the reference, the ranks as threads and the checks.
#include "cross_rank_bits.hpp"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>

#include "transport/inproc_transport.hpp"

namespace coll::testing::cross_rank {

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
namespace {

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

std::string inputs_text(const Format& f, const std::uint64_t* inputs, int n) {
  std::string text = "inputs by rank [";
  for (int r = 0; r < n; ++r) text += (r ? " " : "") + hex(inputs[r], f.bytes);
  return text + "]";
}

}  // namespace

std::uint64_t case_seed(std::uint64_t salt, const Format& f, ReduceOp op, std::size_t count,
                        int ranks) {
  return mix(seed() ^ mix(salt ^ mix((std::uint64_t(f.type) << 48) ^ (std::uint64_t(op) << 40) ^
                                     (std::uint64_t(ranks) << 32) ^ count)));
}

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

// ---- Ranks as threads ----

std::string placement(int ranks, bool one_node) {
  const std::vector<int> nodes = node_map(ranks, one_node);
  return std::to_string(ranks) + " ranks on " + std::to_string(nodes.back() + 1) +
         (nodes.back() == 0 ? " node" : " nodes");
}

coll::Tuning segments(std::size_t local, std::size_t across_nodes) {
  coll::Tuning tuning;
  tuning.segment_bytes = local;
  tuning.net_segment_bytes = across_nodes;
  return tuning;
}

std::vector<std::string> run_on_rank_threads(int ranks, bool one_node, const Steps& steps) {
  const auto world = coll::InprocWorld::create(ranks);
  const std::vector<int> node_of_rank = node_map(ranks, one_node);
  return step_together<RankEnv>(
      ranks, steps, [&](int rank, const std::function<void(RankEnv&)>& body) {
        RankEnv env(*world, rank, 20, node_of_rank);  // 20 s: a deadlock fails the test
        body(env);
      });
}

// ---- Checks ----

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

void check_copy(const Format& f, const std::byte* want, const std::byte* got, std::size_t count,
                const std::string& what, Findings& findings) {
  if (std::memcmp(want, got, count * static_cast<std::size_t>(f.bytes)) == 0) return;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t expected = load(f, want, i), have = load(f, got, i);
    if (expected == have) continue;
    findings.add(what, "element " + std::to_string(i) + ": " + hex(expected, f.bytes) + " became " +
                           hex(have, f.bytes));
  }
}

}  // namespace coll::testing::cross_rank
