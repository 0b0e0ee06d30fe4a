// Portable scalar conversions between float32 and the 16-bit float formats (IEEE binary16 and
// bfloat16), rounding to nearest-even. The SIMD paths must agree with these bit for bit.
#pragma once

#include <bit>
#include <cstdint>

namespace coll::half {

// binary16 -> float32 is exact. A signalling NaN comes back quiet, as the F16C instruction does.
inline float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) {  // infinity or NaN
    const std::uint32_t quiet = man != 0 ? 0x400000u : 0u;
    return std::bit_cast<float>(sign | 0x7f800000u | quiet | (man << 13));
  }
  if (exp == 0) {  // zero or subnormal: man * 2^-24 is exact in float32
    const float magnitude = static_cast<float>(man) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));  // rebias 15 -> 127
}

// float32 -> binary16, round to nearest-even; overflow gives infinity, NaN stays NaN (quiet, with
// the top payload bits kept, matching VCVTPS2PH).
inline std::uint16_t float_to_fp16(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return sign | 0x7c00u;       // >= 65520 (65504 + half an ulp): infinity
  if (abs >= 0x38800000u) {                            // >= 2^-14: a normal binary16
    const std::uint32_t rebiased = abs - 0x38000000u;  // exponent 127 -> 15 bias
    const std::uint32_t rounded = rebiased + 0xfffu + ((rebiased >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | (rounded >> 13));  // a carry bumps the exponent
  }
  // Subnormal result: the value in units of 2^-24, rounded to an integer (0x400 is the smallest
  // normal, whose encoding is the same number). Below 2^-25 (exponent < 102) everything rounds to
  // 0.
  const std::uint32_t exp = abs >> 23;
  if (exp < 102) return sign;
  const std::uint32_t man = (abs & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126 - exp;  // 14..24
  const std::uint32_t kept = man >> shift;
  const std::uint32_t rest = man & ((1u << shift) - 1);
  const std::uint32_t halfway = 1u << (shift - 1);
  const std::uint32_t up = (rest > halfway || (rest == halfway && (kept & 1u))) ? 1u : 0u;
  return static_cast<std::uint16_t>(sign | (kept + up));
}

// bfloat16 is the top half of a float32: widening is a shift.
inline float bf16_to_float(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

// float32 -> bfloat16, round to nearest-even (subnormals kept, unlike VCVTNEPS2BF16); NaN is made
// quiet so that rounding cannot turn it into infinity. Branch-free so that loops vectorize.
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const std::uint32_t quiet_nan = (bits >> 16) | 0x40u;
  const bool is_nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<std::uint16_t>(is_nan ? quiet_nan : rounded);
}

}  // namespace coll::half
