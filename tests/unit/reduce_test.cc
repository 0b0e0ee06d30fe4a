// Reduction kernels (libcoll/src/reduce) against an independent scalar model: integers are
// computed in 64 bits and truncated, float32 in double (innocuous double rounding for + and *),
// and the 16-bit formats are decoded with ldexp and encoded by searching the ordered table of
// all their values, never with the bit tricks the library uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "coll/error.hpp"
#include "coll/half.hpp"
#include "reduce/kernels.hpp"
#include "reduce/reducer.hpp"

namespace coll {

// Parameters print as names ("float32", "sum") rather than as raw enum bytes; outside the
// anonymous namespace, where argument-dependent lookup finds them.
void PrintTo(DataType type, std::ostream* os) {
  *os << dtype_name(type);
}
void PrintTo(ReduceOp op, std::ostream* os) {
  *os << op_name(op);
}

namespace {

using reduce_detail::Fp16Path;

// ---- The 16-bit formats, by value ----

struct Format16 {
  int man_bits;
  int bias;
  std::uint16_t inf() const { return static_cast<std::uint16_t>(0x7fff & ~((1 << man_bits) - 1)); }
  // Magnitudes of the patterns 0..inf(); the entry for inf() is the first value that rounds to
  // infinity's neighbour above the largest finite one (2^(emax+1)).
  const std::vector<double>& table() const {
    static std::vector<double> tables[2];
    std::vector<double>& t = tables[man_bits == 10 ? 0 : 1];
    if (t.empty()) {
      for (int bits = 0; bits <= inf(); ++bits) {
        const int man = bits & ((1 << man_bits) - 1);
        const int exp = bits >> man_bits;
        t.push_back(exp == 0 ? std::ldexp(man, 1 - bias - man_bits)
                             : std::ldexp((1 << man_bits) + man, exp - bias - man_bits));
      }
    }
    return t;
  }
};
constexpr Format16 kFp16{10, 15};
constexpr Format16 kBf16{7, 127};

double decode(Format16 f, std::uint16_t h) {
  const int mag = h & 0x7fff;
  const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
  if (mag > f.inf()) return std::numeric_limits<double>::quiet_NaN();
  if (mag == f.inf()) return sign * std::numeric_limits<double>::infinity();
  return sign * f.table()[static_cast<std::size_t>(mag)];
}

bool is_nan16(Format16 f, std::uint16_t h) {
  return (h & 0x7fff) > f.inf();
}

// Nearest pattern, ties to the even one; at or beyond the rounding threshold: infinity.
std::uint16_t encode(Format16 f, double x) {
  if (std::isnan(x)) return static_cast<std::uint16_t>(f.inf() | (1 << (f.man_bits - 1)));
  const auto sign = static_cast<std::uint16_t>(std::signbit(x) ? 0x8000 : 0);
  const double a = std::fabs(x);
  const std::vector<double>& t = f.table();
  std::size_t lo = 0;
  std::size_t hi = f.inf();
  if (a >= t[hi]) return sign | f.inf();
  while (hi - lo > 1) {  // invariant: t[lo] <= a < t[hi]
    const std::size_t mid = (lo + hi) / 2;
    (t[mid] <= a ? lo : hi) = mid;
  }
  const double below = a - t[lo];
  const double above = t[hi] - a;
  const std::size_t pick = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<std::uint16_t>(sign | pick);
}

// ---- Scalar reference of one element ----

// The documented float semantics: y unless x compares strictly less (min) / greater (max).
template <class F>
F ref_float(ReduceOp op, F x, F y) {
  using Wide = std::conditional_t<std::is_same_v<F, float>, double, F>;
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return static_cast<F>(static_cast<Wide>(x) + static_cast<Wide>(y));
    case ReduceOp::Prod:
      return static_cast<F>(static_cast<Wide>(x) * static_cast<Wide>(y));
    case ReduceOp::Min:
      return std::isless(x, y) ? x : y;
    case ReduceOp::Max:
      return std::isgreater(x, y) ? x : y;
  }
  return F{};
}

template <class T>
T ref_int(ReduceOp op, T x, T y) {
  using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
  const auto wx = static_cast<std::uint64_t>(static_cast<Wide>(x));
  const auto wy = static_cast<std::uint64_t>(static_cast<Wide>(y));
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      return static_cast<T>(wx + wy);
    case ReduceOp::Prod:
      return static_cast<T>(wx * wy);
    case ReduceOp::Min:
      return y < x ? y : x;
    case ReduceOp::Max:
      return x < y ? y : x;
  }
  return T{};
}

std::uint16_t ref_16(Format16 f, ReduceOp op, std::uint16_t x, std::uint16_t y) {
  const auto fx = static_cast<float>(decode(f, x));
  const auto fy = static_cast<float>(decode(f, y));
  return encode(f, ref_float(op, fx, fy));
}

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
void store(unsigned char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

template <class T, class Fn>
void each(unsigned char* out, const unsigned char* a, const unsigned char* b, std::size_t n,
          Fn fn) {
  for (std::size_t i = 0; i < n; ++i) {
    store(out + i * sizeof(T), fn(load<T>(a + i * sizeof(T)), load<T>(b + i * sizeof(T))));
  }
}

void reference(DataType t, ReduceOp op, unsigned char* out, const unsigned char* a,
               const unsigned char* b, std::size_t n) {
  auto ints = [&](auto zero) {
    using T = decltype(zero);
    each<T>(out, a, b, n, [op](T x, T y) { return ref_int(op, x, y); });
  };
  switch (t) {
    case DataType::Int8:
      return ints(std::int8_t{});
    case DataType::Uint8:
      return ints(std::uint8_t{});
    case DataType::Int32:
      return ints(std::int32_t{});
    case DataType::Uint32:
      return ints(std::uint32_t{});
    case DataType::Int64:
      return ints(std::int64_t{});
    case DataType::Uint64:
      return ints(std::uint64_t{});
    case DataType::Float32:
      return each<float>(out, a, b, n, [op](float x, float y) { return ref_float(op, x, y); });
    case DataType::Float64:
      return each<double>(out, a, b, n, [op](double x, double y) { return ref_float(op, x, y); });
    case DataType::Float16:
    case DataType::Bfloat16: {
      const Format16 f = t == DataType::Float16 ? kFp16 : kBf16;
      return each<std::uint16_t>(
          out, a, b, n, [&](std::uint16_t x, std::uint16_t y) { return ref_16(f, op, x, y); });
    }
  }
}

// Equal bit for bit, except that any NaN matches a NaN.
bool same(DataType t, const unsigned char* expected, const unsigned char* actual) {
  switch (t) {
    case DataType::Float32: {
      const auto e = load<float>(expected), a = load<float>(actual);
      if (std::isnan(e)) return std::isnan(a);
      break;
    }
    case DataType::Float64: {
      const auto e = load<double>(expected), a = load<double>(actual);
      if (std::isnan(e)) return std::isnan(a);
      break;
    }
    case DataType::Float16:
    case DataType::Bfloat16: {
      const Format16 f = t == DataType::Float16 ? kFp16 : kBf16;
      const auto e = load<std::uint16_t>(expected), a = load<std::uint16_t>(actual);
      if (is_nan16(f, e)) return is_nan16(f, a);
      break;
    }
    default:
      break;
  }
  return std::memcmp(expected, actual, dtype_size(t)) == 0;
}

std::string hex(const unsigned char* p, std::size_t size) {
  std::string s = "0x";
  char buf[3];
  for (std::size_t i = size; i-- > 0;) {  // little-endian: most significant byte last
    std::snprintf(buf, sizeof buf, "%02x", p[i]);
    s += buf;
  }
  return s;
}

// Index of the first difference in n elements, or -1.
long first_mismatch(DataType t, const unsigned char* expected, const unsigned char* actual,
                    std::size_t n) {
  const std::size_t size = dtype_size(t);
  if (n == 0 || std::memcmp(expected, actual, n * size) == 0) return -1;  // the usual case
  for (std::size_t i = 0; i < n; ++i) {
    if (!same(t, expected + i * size, actual + i * size)) return static_cast<long>(i);
  }
  return -1;
}

// ---- Inputs ----

// Random bits (every value: NaN, infinity, subnormals, wrap-around) for one element in four;
// the others are floats of moderate magnitude so that sums and products round visibly.
std::vector<unsigned char> random_input(DataType t, std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  const std::size_t size = dtype_size(t);
  std::vector<unsigned char> out(n * size);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t bits = rng();
    unsigned char* p = out.data() + i * size;
    std::memcpy(p, &bits, size);
    if (bits % 4 == 0) continue;
    const double sign = (bits >> 8) % 2 == 1 ? -1.0 : 1.0;
    const double value = sign * std::ldexp(1.0 + static_cast<double>(bits >> 12) * 0x1p-52,
                                           static_cast<int>((bits >> 2) % 7) - 3);
    if (t == DataType::Float32) store(p, static_cast<float>(value));
    if (t == DataType::Float64) store(p, value);
    if (t == DataType::Float16) store(p, encode(kFp16, value));
    if (t == DataType::Bfloat16) store(p, encode(kBf16, value));
  }
  return out;
}

// ---- Every type x op, several counts, offsets and aliasings ----

constexpr std::size_t kGuard = 4;  // elements after the end that must stay untouched

class ReduceMatrix : public ::testing::TestWithParam<std::tuple<DataType, ReduceOp>> {};

TEST_P(ReduceMatrix, MatchesScalarReference) {
  const auto [type, op] = GetParam();
  const std::size_t size = dtype_size(type);
  for (const std::size_t count : {0, 1, 7, 33, 1000003}) {
    for (const std::size_t offset : {0, 1, 3}) {
      if (count > 1000 && offset != 3) continue;  // the big case once, unaligned, to stay quick
      SCOPED_TRACE("count " + std::to_string(count) + ", offset " + std::to_string(offset));
      const std::size_t n = count + offset + kGuard;
      // Operands start at different element offsets from their (aligned) allocations.
      const auto a_buf = random_input(type, n, static_cast<unsigned>(count * 7 + offset));
      const auto b_buf = random_input(type, n + 2, static_cast<unsigned>(count * 7 + offset + 1));
      const unsigned char* a = a_buf.data() + offset * size;
      const unsigned char* b = b_buf.data() + (offset + 2) % 4 * size;
      std::vector<unsigned char> expected(count * size);
      reference(type, op, expected.data(), a, b, count);

      std::vector<unsigned char> dst_buf(n * size);
      unsigned char* dst = dst_buf.data() + offset * size;
      for (const std::string mode : {"distinct", "dst==a", "dst==b"}) {
        std::memset(dst_buf.data(), 0xa5, dst_buf.size());
        if (mode == "dst==a") std::memcpy(dst, a, count * size);
        if (mode == "dst==b") std::memcpy(dst, b, count * size);
        reduce(type, op, dst, mode == "dst==a" ? dst : a, mode == "dst==b" ? dst : b, count);
        const long bad = first_mismatch(type, expected.data(), dst, count);
        ASSERT_EQ(bad, -1) << mode << ": element " << bad << " of " << dtype_name(type) << " "
                           << op_name(op) << ": " << hex(a + bad * size, size) << " op "
                           << hex(b + bad * size, size) << " gave " << hex(dst + bad * size, size)
                           << ", expected " << hex(expected.data() + bad * size, size);
        const auto untouched = [&](std::size_t from, std::size_t to) {
          return std::all_of(dst_buf.begin() + static_cast<long>(from),
                             dst_buf.begin() + static_cast<long>(to),
                             [](unsigned char c) { return c == 0xa5; });
        };
        ASSERT_TRUE(untouched(0, offset * size) &&
                    untouched((offset + count) * size, dst_buf.size()))
            << mode << ": wrote outside the output";
      }

      // Each float16 path on its own (the SIMD ones hand their tails to the portable one).
      if (type != DataType::Float16) continue;
      for (const Fp16Path path : {Fp16Path::Avx512, Fp16Path::F16c, Fp16Path::Portable}) {
        if (!reduce_detail::fp16_path_supported(path)) continue;
        std::vector<std::uint16_t> out(count + 1);
        reduce_detail::reduce_fp16(op, out.data(), reinterpret_cast<const std::uint16_t*>(a),
                                   reinterpret_cast<const std::uint16_t*>(b), count, path);
        const auto* got = reinterpret_cast<const unsigned char*>(out.data());
        EXPECT_EQ(first_mismatch(type, expected.data(), got, count), -1)
            << "float16 path " << static_cast<int>(path);
      }
    }
  }
}

std::string matrix_name(const ::testing::TestParamInfo<ReduceMatrix::ParamType>& param) {
  return std::string(dtype_name(std::get<0>(param.param))) + "_" +
         std::string(op_name(std::get<1>(param.param)));
}

constexpr DataType kAllTypes[] = {
    DataType::Int8,   DataType::Uint8,   DataType::Int32,   DataType::Uint32,  DataType::Int64,
    DataType::Uint64, DataType::Float16, DataType::Float32, DataType::Float64, DataType::Bfloat16};

INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, ReduceMatrix,
                         ::testing::Combine(::testing::ValuesIn(kAllTypes),
                                            ::testing::Values(ReduceOp::Sum, ReduceOp::Prod,
                                                              ReduceOp::Max, ReduceOp::Min,
                                                              ReduceOp::Avg)),
                         matrix_name);

// Each SIMD float16 path against the portable one, on every value pair of a random sample
// (the matrix above runs the supported ones within its cases). A path this CPU or build lacks is
// a reported skip, not a silent pass.
class Fp16PathMatchesPortable : public ::testing::TestWithParam<Fp16Path> {};

TEST_P(Fp16PathMatchesPortable, OnEveryOpBitForBit) {
  const Fp16Path path = GetParam();
  if (!reduce_detail::fp16_path_supported(path)) {
    GTEST_SKIP() << "this CPU or build lacks the "
                 << (path == Fp16Path::Avx512 ? "AVX-512" : "F16C")
                 << " float16 path: not exercised";
  }
  std::mt19937 random(7);
  std::vector<std::uint16_t> a(1027), b(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<std::uint16_t>(random());
    b[i] = static_cast<std::uint16_t>(random());
  }
  for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Max, ReduceOp::Min}) {
    std::vector<std::uint16_t> want(a.size()), got(a.size());
    reduce_detail::reduce_fp16(op, want.data(), a.data(), b.data(), a.size(), Fp16Path::Portable);
    reduce_detail::reduce_fp16(op, got.data(), a.data(), b.data(), a.size(), path);
    for (std::size_t i = 0; i < a.size(); ++i) {
      // NaN results may carry another payload; both must be NaN there.
      const bool both_nan =
          std::isnan(half::fp16_to_float(want[i])) && std::isnan(half::fp16_to_float(got[i]));
      ASSERT_TRUE(want[i] == got[i] || both_nan)
          << op_name(op) << " at " << i << ": " << a[i] << ", " << b[i] << " gave " << got[i]
          << ", portable " << want[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SimdPaths, Fp16PathMatchesPortable,
                         ::testing::Values(Fp16Path::Avx512, Fp16Path::F16c),
                         [](const ::testing::TestParamInfo<Fp16Path>& path) {
                           return std::string(path.param == Fp16Path::Avx512 ? "avx512" : "f16c");
                         });

// ---- Avg: accumulate as Sum, then divide once ----

void ref_divide(DataType t, unsigned char* p, int divisor) {
  auto ints = [&](auto zero) {
    using T = decltype(zero);
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    store(p, static_cast<T>(static_cast<Wide>(load<T>(p)) / static_cast<Wide>(divisor)));
  };
  switch (t) {
    case DataType::Int8:
      return ints(std::int8_t{});
    case DataType::Uint8:
      return ints(std::uint8_t{});
    case DataType::Int32:
      return ints(std::int32_t{});
    case DataType::Uint32:
      return ints(std::uint32_t{});
    case DataType::Int64:
      return ints(std::int64_t{});
    case DataType::Uint64:
      return ints(std::uint64_t{});
    case DataType::Float32:
      return store(p, static_cast<float>(static_cast<double>(load<float>(p)) / divisor));
    case DataType::Float64:
      return store(p, load<double>(p) / divisor);
    case DataType::Float16:
    case DataType::Bfloat16: {
      const Format16 f = t == DataType::Float16 ? kFp16 : kBf16;
      const auto x = static_cast<float>(decode(f, load<std::uint16_t>(p)));
      return store(p, encode(f, static_cast<float>(static_cast<double>(x) / divisor)));
    }
  }
}

class Average : public ::testing::TestWithParam<DataType> {};

TEST_P(Average, SumThenDivideTruncatesOrRounds) {
  const DataType type = GetParam();
  const std::size_t size = dtype_size(type);
  for (const std::size_t count : {1, 33, 100003}) {
    for (const int divisor : {1, 2, 3, 7, 300, 1 << 30}) {
      SCOPED_TRACE("count " + std::to_string(count) + ", divisor " + std::to_string(divisor));
      const auto a = random_input(type, count, 11);
      const auto b = random_input(type, count, 12);
      std::vector<unsigned char> expected(count * size);
      reference(type, ReduceOp::Sum, expected.data(), a.data(), b.data(), count);
      for (std::size_t i = 0; i < count; ++i) ref_divide(type, expected.data() + i * size, divisor);

      std::vector<unsigned char> got(count * size);
      reduce(type, ReduceOp::Avg, got.data(), a.data(), b.data(), count);
      finish_average(type, got.data(), count, divisor);
      const long bad = first_mismatch(type, expected.data(), got.data(), count);
      ASSERT_EQ(bad, -1) << dtype_name(type) << " element " << bad << ": got "
                         << hex(got.data() + bad * size, size) << ", expected "
                         << hex(expected.data() + bad * size, size);
      if (type != DataType::Float16) continue;
      for (const Fp16Path path : {Fp16Path::Avx512, Fp16Path::F16c, Fp16Path::Portable}) {
        if (!reduce_detail::fp16_path_supported(path)) continue;
        std::vector<std::uint16_t> sums(count);
        reduce(type, ReduceOp::Sum, sums.data(), a.data(), b.data(), count);
        reduce_detail::average_fp16(sums.data(), count, divisor, path);
        EXPECT_EQ(first_mismatch(type, expected.data(),
                                 reinterpret_cast<const unsigned char*>(sums.data()), count),
                  -1)
            << "float16 path " << static_cast<int>(path);
      }
    }
  }
}

std::string type_name(const ::testing::TestParamInfo<DataType>& param) {
  return std::string(dtype_name(param.param));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, Average, ::testing::ValuesIn(kAllTypes), type_name);

// ---- Hand-picked cases, stated in the formats' own terms ----

template <class T>
T reduce1(DataType t, ReduceOp op, T x, T y) {
  T out{};
  reduce(t, op, &out, &x, &y, 1);
  return out;
}

std::uint16_t fp16(ReduceOp op, std::uint16_t x, std::uint16_t y) {
  return reduce1(DataType::Float16, op, x, y);
}
std::uint16_t bf16(ReduceOp op, std::uint16_t x, std::uint16_t y) {
  return reduce1(DataType::Bfloat16, op, x, y);
}

TEST(Float16, RoundsTiesToEven) {
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x3c00, 0x1000), 0x3c00);   // 1 + 2^-11: tie, 1.0 is even
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x3c01, 0x1000), 0x3c02);   // (1 + 2^-10) + 2^-11: tie, up
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x3c00, 0x1001), 0x3c01);   // just above the tie: up
  EXPECT_EQ(fp16(ReduceOp::Prod, 0x3e00, 0x3e00), 0x4080);  // 1.5 * 1.5 = 2.25, exact
}

TEST(Float16, OverflowsToInfinity) {
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x7bff, 0x4800), 0x7bff);   // 65504 + 8: below the midpoint
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x7bff, 0x4c00), 0x7c00);   // 65504 + 16 = 65520: tie, to inf
  EXPECT_EQ(fp16(ReduceOp::Sum, 0xfbff, 0xcc00), 0xfc00);   // and to -inf
  EXPECT_EQ(fp16(ReduceOp::Prod, 0x7bff, 0x4000), 0x7c00);  // 65504 * 2
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x7c00, 0x3c00), 0x7c00);   // inf + 1
}

TEST(Float16, NanStaysNan) {
  EXPECT_TRUE(is_nan16(kFp16, fp16(ReduceOp::Sum, 0x7e00, 0x3c00)));
  EXPECT_TRUE(is_nan16(kFp16, fp16(ReduceOp::Sum, 0x7c01, 0x0000)));   // signalling NaN
  EXPECT_TRUE(is_nan16(kFp16, fp16(ReduceOp::Sum, 0x7c00, 0xfc00)));   // inf - inf
  EXPECT_TRUE(is_nan16(kFp16, fp16(ReduceOp::Prod, 0x7c00, 0x0000)));  // inf * 0
  EXPECT_TRUE(is_nan16(kFp16, fp16(ReduceOp::Sum, 0xffff, 0x3c00)));
}

TEST(Float16, Subnormals) {
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x0001, 0x0001), 0x0002);   // 2^-24 + 2^-24
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x03ff, 0x0001), 0x0400);   // into the smallest normal
  EXPECT_EQ(fp16(ReduceOp::Sum, 0x0400, 0x8001), 0x03ff);   // and back out of it
  EXPECT_EQ(fp16(ReduceOp::Prod, 0x0001, 0x3800), 0x0000);  // 2^-25: tie, to even zero
  EXPECT_EQ(fp16(ReduceOp::Prod, 0x0003, 0x3800), 0x0002);  // 1.5 * 2^-24: tie, to 2
  EXPECT_EQ(fp16(ReduceOp::Prod, 0x8001, 0x3800), 0x8000);  // -2^-25: negative zero
  EXPECT_EQ(fp16(ReduceOp::Prod, 0x0001, 0x3a00), 0x0001);  // 0.75 * 2^-24: up to 2^-24
}

TEST(Bfloat16, RoundingOverflowNanSubnormals) {
  EXPECT_EQ(bf16(ReduceOp::Sum, 0x3f80, 0x3b80), 0x3f80);  // 1 + 2^-8: tie, 1.0 is even
  EXPECT_EQ(bf16(ReduceOp::Sum, 0x3f81, 0x3b80), 0x3f82);  // tie, up to even
  EXPECT_EQ(bf16(ReduceOp::Sum, 0x7f7f, 0x7f7f), 0x7f80);  // max + max: inf
  EXPECT_EQ(bf16(ReduceOp::Sum, 0xff7f, 0xff7f), 0xff80);
  EXPECT_TRUE(is_nan16(kBf16, bf16(ReduceOp::Sum, 0x7fc0, 0x3f80)));
  EXPECT_TRUE(is_nan16(kBf16, bf16(ReduceOp::Sum, 0x7f81, 0x0000)));  // signalling NaN
  EXPECT_TRUE(is_nan16(kBf16, bf16(ReduceOp::Sum, 0x7f80, 0xff80)));
  EXPECT_EQ(bf16(ReduceOp::Sum, 0x0001, 0x0000), 0x0001);  // subnormals are not flushed
  EXPECT_EQ(bf16(ReduceOp::Sum, 0x0001, 0x0001), 0x0002);
  EXPECT_EQ(bf16(ReduceOp::Prod, 0x0001, 0x3f00), 0x0000);  // 2^-134: tie, to even zero
  EXPECT_EQ(bf16(ReduceOp::Prod, 0x0003, 0x3f00), 0x0002);  // 1.5 units: tie, to 2
  // Rounding a float NaN whose low half is all ones must not carry it into another class.
  EXPECT_TRUE(is_nan16(kBf16, half::float_to_bf16(std::bit_cast<float>(0x7fffffffu))));
  EXPECT_TRUE(is_nan16(kBf16, half::float_to_bf16(std::bit_cast<float>(0xff80ffffu))));
}

// The library's conversions against the model, for every 16-bit pattern.
TEST(HalfConversions, EveryPatternRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    for (const bool is_fp16 : {true, false}) {
      const Format16 f = is_fp16 ? kFp16 : kBf16;
      const float wide = is_fp16 ? half::fp16_to_float(h) : half::bf16_to_float(h);
      const std::uint16_t back = is_fp16 ? half::float_to_fp16(wide) : half::float_to_bf16(wide);
      if (is_nan16(f, h)) {
        ASSERT_TRUE(std::isnan(wide)) << std::hex << bits;
        ASSERT_TRUE(is_nan16(f, back)) << std::hex << bits;
        ASSERT_EQ(back & 0x8000, h & 0x8000) << "NaN sign " << std::hex << bits;
        continue;
      }
      const double exact = decode(f, h);
      ASSERT_EQ(static_cast<double>(wide), exact) << std::hex << bits;
      ASSERT_EQ(std::signbit(wide), std::signbit(exact)) << std::hex << bits;
      ASSERT_EQ(back, h) << std::hex << bits;
    }
  }
}

// Narrowing at and around every midpoint between neighbouring 16-bit values (exact in float).
TEST(HalfConversions, MidpointsAndTheirNeighbours) {
  for (const bool is_fp16 : {true, false}) {
    const Format16 f = is_fp16 ? kFp16 : kBf16;
    for (std::uint32_t bits = 0; bits < f.inf(); ++bits) {
      const double mid = (decode(f, static_cast<std::uint16_t>(bits)) + f.table()[bits + 1]) / 2;
      const auto m = static_cast<float>(mid);
      ASSERT_EQ(static_cast<double>(m), mid);
      for (const float x : {m, std::nextafter(m, 0.0f),
                            std::nextafter(m, std::numeric_limits<float>::infinity()), -m}) {
        const std::uint16_t got = is_fp16 ? half::float_to_fp16(x) : half::float_to_bf16(x);
        ASSERT_EQ(got, encode(f, x)) << (is_fp16 ? "fp16 " : "bf16 ") << x;
      }
    }
  }
}

// ---- Min and max of floats: y unless x is strictly better ----

TEST(FloatMinMax, NanAndSignedZeroFollowTheDocumentedRule) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const DataType f32 = DataType::Float32;
  EXPECT_EQ(reduce1(f32, ReduceOp::Min, nan, 1.0f), 1.0f);          // NaN only in x: dropped
  EXPECT_TRUE(std::isnan(reduce1(f32, ReduceOp::Min, 1.0f, nan)));  // NaN in y: kept
  EXPECT_EQ(reduce1(f32, ReduceOp::Max, nan, 1.0f), 1.0f);
  EXPECT_TRUE(std::isnan(reduce1(f32, ReduceOp::Max, 1.0f, nan)));
  EXPECT_FALSE(std::signbit(reduce1(f32, ReduceOp::Min, -0.0f, 0.0f)));  // equal: y
  EXPECT_TRUE(std::signbit(reduce1(f32, ReduceOp::Min, 0.0f, -0.0f)));
  EXPECT_TRUE(std::isnan(reduce1(DataType::Float64, ReduceOp::Max, 2.0, std::nan(""))));
  EXPECT_EQ(fp16(ReduceOp::Max, 0x7e00, 0x3c00), 0x3c00);
  EXPECT_TRUE(is_nan16(kFp16, fp16(ReduceOp::Max, 0x3c00, 0x7e00)));
  EXPECT_EQ(bf16(ReduceOp::Min, 0x8000, 0x0000), 0x0000);
}

// ---- Integers wrap; averages truncate toward zero ----

TEST(Integers, WrapAround) {
  using U8 = std::uint8_t;
  EXPECT_EQ(reduce1<U8>(DataType::Uint8, ReduceOp::Sum, 200, 100), 44);
  EXPECT_EQ(reduce1<U8>(DataType::Uint8, ReduceOp::Prod, 16, 16), 0);
  EXPECT_EQ(reduce1<U8>(DataType::Uint8, ReduceOp::Prod, 255, 255), 1);
  EXPECT_EQ(reduce1<std::int8_t>(DataType::Int8, ReduceOp::Sum, 127, 1), -128);
  EXPECT_EQ(reduce1<std::int8_t>(DataType::Int8, ReduceOp::Prod, -128, -1), -128);
  EXPECT_EQ(reduce1<std::int32_t>(DataType::Int32, ReduceOp::Sum, INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(reduce1<std::uint32_t>(DataType::Uint32, ReduceOp::Prod, 1u << 16, 1u << 16), 0u);
  EXPECT_EQ(reduce1<std::int64_t>(DataType::Int64, ReduceOp::Prod, INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(reduce1<std::uint64_t>(DataType::Uint64, ReduceOp::Sum, UINT64_MAX, 2), 1u);
  EXPECT_EQ(reduce1<std::int8_t>(DataType::Int8, ReduceOp::Min, -128, 127), -128);
  EXPECT_EQ(reduce1<U8>(DataType::Uint8, ReduceOp::Max, 0, 255), 255);
}

TEST(Integers, AverageTruncatesTowardZero) {
  std::int32_t i32[] = {-7, 7, -1, INT32_MIN};
  finish_average(DataType::Int32, i32, 4, 2);
  EXPECT_EQ(i32[0], -3);
  EXPECT_EQ(i32[1], 3);
  EXPECT_EQ(i32[2], 0);
  EXPECT_EQ(i32[3], INT32_MIN / 2);
  std::int8_t i8[] = {-128, 127};
  finish_average(DataType::Int8, i8, 2, 3);
  EXPECT_EQ(i8[0], -42);
  EXPECT_EQ(i8[1], 42);
  std::uint8_t u8 = reduce1<std::uint8_t>(DataType::Uint8, ReduceOp::Avg, 200, 100);
  finish_average(DataType::Uint8, &u8, 1, 2);
  EXPECT_EQ(u8, 22);  // the sum wrapped to 44 first, as NCCL's does
  std::uint64_t u64 = UINT64_MAX;
  finish_average(DataType::Uint64, &u64, 1, 3);
  EXPECT_EQ(u64, UINT64_MAX / 3);
  std::int64_t i64 = -(std::int64_t{1} << 62) - 1;
  finish_average(DataType::Int64, &i64, 1, 4);
  EXPECT_EQ(i64, -(std::int64_t{1} << 60));
}

// ---- Arguments ----

TEST(Reduce, ZeroCountTouchesNothing) {
  reduce(DataType::Float32, ReduceOp::Sum, nullptr, nullptr, nullptr, 0);
  finish_average(DataType::Float16, nullptr, 0, 4);
}

TEST(Reduce, RejectsInvalidArguments) {
  float x = 1;
  EXPECT_THROW(reduce(DataType::Float32, static_cast<ReduceOp>(9), &x, &x, &x, 1), Error);
  EXPECT_THROW(reduce(static_cast<DataType>(10), ReduceOp::Sum, &x, &x, &x, 1), Error);
  EXPECT_THROW(finish_average(DataType::Float32, &x, 1, 0), Error);
  EXPECT_THROW(finish_average(DataType::Int32, &x, 1, -2), Error);
  EXPECT_EQ(x, 1.0f);
}

}  // namespace
}  // namespace coll
