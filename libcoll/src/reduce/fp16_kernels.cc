// Float16 kernels: widen to float32, operate, round back to nearest-even. The conversions use
// VCVTPH2PS/VCVTPS2PH (AVX-512 or F16C) where the CPU has them, else the portable code in
// half.hpp, which rounds identically; the SIMD loops hand their tails to the portable code.
#include "coll/half.hpp"
#include "reduce/kernels.hpp"
#include "reduce/ops.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define COLL_HAVE_X86_FP16 1
#if !defined(__clang__)
// GCC 12's own _mm512_undefined_ps() trips this warning once inlined (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

namespace coll::reduce_detail {
namespace {

template <class Op>
void fp16_portable(std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b,
                   std::size_t n, Op op) {
  for (std::size_t i = 0; i < n; ++i) {
    dst[i] = half::float_to_fp16(op.apply(half::fp16_to_float(a[i]), half::fp16_to_float(b[i])));
  }
}

#ifdef COLL_HAVE_X86_FP16
constexpr int kNearestEven = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// The ops of ops.hpp on 16 and 8 float lanes. MINPS/MAXPS return the second operand unless the
// first compares strictly less/greater: exactly MinOp and MaxOp, NaN and signed zero included.
#define COLL_AVX512 __attribute__((target("avx512f"), always_inline)) inline
COLL_AVX512 __m512 lanes(SumOp, __m512 x, __m512 y) {
  return _mm512_add_ps(x, y);
}
COLL_AVX512 __m512 lanes(ProdOp, __m512 x, __m512 y) {
  return _mm512_mul_ps(x, y);
}
COLL_AVX512 __m512 lanes(MinOp, __m512 x, __m512 y) {
  return _mm512_min_ps(x, y);
}
COLL_AVX512 __m512 lanes(MaxOp, __m512 x, __m512 y) {
  return _mm512_max_ps(x, y);
}
COLL_AVX512 __m512 lanes(DivideBy<float> op, __m512 x, __m512) {
  return _mm512_div_ps(x, _mm512_set1_ps(op.divisor));
}
#undef COLL_AVX512

#define COLL_AVX __attribute__((target("avx"), always_inline)) inline
COLL_AVX __m256 lanes(SumOp, __m256 x, __m256 y) {
  return _mm256_add_ps(x, y);
}
COLL_AVX __m256 lanes(ProdOp, __m256 x, __m256 y) {
  return _mm256_mul_ps(x, y);
}
COLL_AVX __m256 lanes(MinOp, __m256 x, __m256 y) {
  return _mm256_min_ps(x, y);
}
COLL_AVX __m256 lanes(MaxOp, __m256 x, __m256 y) {
  return _mm256_max_ps(x, y);
}
COLL_AVX __m256 lanes(DivideBy<float> op, __m256 x, __m256) {
  return _mm256_div_ps(x, _mm256_set1_ps(op.divisor));
}
#undef COLL_AVX

template <class Op>
__attribute__((target("avx512f"))) void fp16_avx512(std::uint16_t* dst, const std::uint16_t* a,
                                                    const std::uint16_t* b, std::size_t n, Op op) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    const __m512 y = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
    const __m256i r = _mm512_cvtps_ph(lanes(op, x, y), kNearestEven);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), r);
  }
  fp16_portable(dst + i, a + i, b + i, n - i, op);
}

template <class Op>
__attribute__((target("avx,f16c"))) void fp16_f16c(std::uint16_t* dst, const std::uint16_t* a,
                                                   const std::uint16_t* b, std::size_t n, Op op) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    const __m128i r = _mm256_cvtps_ph(lanes(op, x, y), kNearestEven);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), r);
  }
  fp16_portable(dst + i, a + i, b + i, n - i, op);
}

bool cpu_has(Fp16Path path) {
  __builtin_cpu_init();
  switch (path) {
    case Fp16Path::Avx512:
      return __builtin_cpu_supports("avx512f");
    case Fp16Path::F16c:
#if defined(__clang__)  // clang cannot ask for f16c; every AVX2 CPU has it
      return __builtin_cpu_supports("avx2");
#else
      return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#endif
    default:
      return true;
  }
}
#else
bool cpu_has(Fp16Path path) {
  return path == Fp16Path::Portable || path == Fp16Path::Best;
}
#endif

// Checked once; an unsupported forced path falls back to the portable code.
Fp16Path resolve(Fp16Path path) {
  static const bool has_avx512 = cpu_has(Fp16Path::Avx512);
  static const bool has_f16c = cpu_has(Fp16Path::F16c);
  if (path == Fp16Path::Best) {
    return has_avx512 ? Fp16Path::Avx512 : has_f16c ? Fp16Path::F16c : Fp16Path::Portable;
  }
  if ((path == Fp16Path::Avx512 && !has_avx512) || (path == Fp16Path::F16c && !has_f16c)) {
    return Fp16Path::Portable;
  }
  return path;
}

template <class Op>
void fp16_run(Fp16Path path, std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b,
              std::size_t n, Op op) {
  switch (resolve(path)) {
#ifdef COLL_HAVE_X86_FP16
    case Fp16Path::Avx512:
      return fp16_avx512(dst, a, b, n, op);
    case Fp16Path::F16c:
      return fp16_f16c(dst, a, b, n, op);
#endif
    default:
      return fp16_portable(dst, a, b, n, op);
  }
}

}  // namespace

bool fp16_path_supported(Fp16Path path) {
  return path == Fp16Path::Best || resolve(path) == path;
}

void reduce_fp16(ReduceOp op, std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b,
                 std::size_t count, Fp16Path path) {
  visit_op(op, [&](auto o) { fp16_run(path, dst, a, b, count, o); });
}

void average_fp16(std::uint16_t* data, std::size_t count, int divisor, Fp16Path path) {
  fp16_run(path, data, data, data, count, DivideBy<float>{static_cast<float>(divisor)});
}

}  // namespace coll::reduce_detail
