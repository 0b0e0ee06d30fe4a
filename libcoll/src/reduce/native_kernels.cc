// Kernels for the integer, float32 and float64 types: plain loops that GCC auto-vectorizes,
// compiled once per x86-64 level (see COLL_TARGET_CLONES).
#include <cstdint>
#include <limits>

#include "reduce/kernels.hpp"
#include "reduce/ops.hpp"

namespace coll::reduce_detail {
namespace {

// No __restrict: dst may be a or b. GCC's run-time overlap check lets dst == a (distance 0)
// through to the vector loop, since each element is read before it is written.
template <class T, class Op>
COLL_ALWAYS_INLINE inline void binary_loop(T* dst, const T* a, const T* b, std::size_t n, Op op) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = op.apply(a[i], b[i]);
}

template <class T>
COLL_ALWAYS_INLINE inline void reduce_as(ReduceOp op, void* dst, const void* a, const void* b,
                                         std::size_t n) {
  visit_op(op, [&](auto o) COLL_ALWAYS_INLINE {
    binary_loop(static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b), n, o);
  });
}

// target_clones does not apply to templates, hence one small function per type.
COLL_TARGET_CLONES void reduce_i8(ReduceOp op, void* d, const void* a, const void* b,
                                  std::size_t n) {
  reduce_as<std::int8_t>(op, d, a, b, n);
}
COLL_TARGET_CLONES void reduce_u8(ReduceOp op, void* d, const void* a, const void* b,
                                  std::size_t n) {
  reduce_as<std::uint8_t>(op, d, a, b, n);
}
COLL_TARGET_CLONES void reduce_i32(ReduceOp op, void* d, const void* a, const void* b,
                                   std::size_t n) {
  reduce_as<std::int32_t>(op, d, a, b, n);
}
COLL_TARGET_CLONES void reduce_u32(ReduceOp op, void* d, const void* a, const void* b,
                                   std::size_t n) {
  reduce_as<std::uint32_t>(op, d, a, b, n);
}
COLL_TARGET_CLONES void reduce_i64(ReduceOp op, void* d, const void* a, const void* b,
                                   std::size_t n) {
  reduce_as<std::int64_t>(op, d, a, b, n);
}
COLL_TARGET_CLONES void reduce_u64(ReduceOp op, void* d, const void* a, const void* b,
                                   std::size_t n) {
  reduce_as<std::uint64_t>(op, d, a, b, n);
}
COLL_TARGET_CLONES void reduce_f32(ReduceOp op, void* d, const void* a, const void* b,
                                   std::size_t n) {
  reduce_as<float>(op, d, a, b, n);
}
COLL_TARGET_CLONES void reduce_f64(ReduceOp op, void* d, const void* a, const void* b,
                                   std::size_t n) {
  reduce_as<double>(op, d, a, b, n);
}

COLL_TARGET_CLONES void divide_f32(float* data, std::size_t n, float divisor) {
  binary_loop(data, data, data, n, DivideBy<float>{divisor});
}
COLL_TARGET_CLONES void divide_f64(double* data, std::size_t n, double divisor) {
  binary_loop(data, data, data, n, DivideBy<double>{divisor});
}

// Integer averages truncate toward zero, as NCCL's. Small types divide in floating point, which
// vectorizes (x86 has no SIMD integer division) and is exact: for |x| <= 2^k and 1 <= d < 2^31,
// x/d rounded to a p-bit mantissa is off by less than 2^(k-p)/d; when k < p that is below the
// 1/d separating a non-integral quotient from the next integer, so truncation finds the true one.
template <class T, class F>
COLL_ALWAYS_INLINE inline void divide_via(void* data, std::size_t n, int divisor) {
  static_assert(sizeof(T) * 8 < std::numeric_limits<F>::digits);
  T* p = static_cast<T*>(data);
  const auto d = static_cast<F>(divisor);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<F>(p[i]) / d);
}

COLL_TARGET_CLONES void divide_i8(void* data, std::size_t n, int divisor) {
  divide_via<std::int8_t, float>(data, n, divisor);
}
COLL_TARGET_CLONES void divide_u8(void* data, std::size_t n, int divisor) {
  divide_via<std::uint8_t, float>(data, n, divisor);
}
COLL_TARGET_CLONES void divide_i32(void* data, std::size_t n, int divisor) {
  divide_via<std::int32_t, double>(data, n, divisor);
}
COLL_TARGET_CLONES void divide_u32(void* data, std::size_t n, int divisor) {
  divide_via<std::uint32_t, double>(data, n, divisor);
}

// 64-bit integers do not fit a double's mantissa: plain division.
template <class T>
void divide_int64(void* data, std::size_t n, int divisor) {
  const auto d = static_cast<T>(divisor);
  T* p = static_cast<T*>(data);
  for (std::size_t i = 0; i < n; ++i) p[i] /= d;
}

}  // namespace

void reduce_native(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
                   std::size_t count) {
  switch (type) {
    case DataType::Int8:
      return reduce_i8(op, dst, a, b, count);
    case DataType::Uint8:
      return reduce_u8(op, dst, a, b, count);
    case DataType::Int32:
      return reduce_i32(op, dst, a, b, count);
    case DataType::Uint32:
      return reduce_u32(op, dst, a, b, count);
    case DataType::Int64:
      return reduce_i64(op, dst, a, b, count);
    case DataType::Uint64:
      return reduce_u64(op, dst, a, b, count);
    case DataType::Float32:
      return reduce_f32(op, dst, a, b, count);
    case DataType::Float64:
      return reduce_f64(op, dst, a, b, count);
    case DataType::Float16:
    case DataType::Bfloat16:
      break;  // not native: reducer.cc never sends them here
  }
}

void average_native(DataType type, void* data, std::size_t count, int divisor) {
  switch (type) {
    case DataType::Int8:
      return divide_i8(data, count, divisor);
    case DataType::Uint8:
      return divide_u8(data, count, divisor);
    case DataType::Int32:
      return divide_i32(data, count, divisor);
    case DataType::Uint32:
      return divide_u32(data, count, divisor);
    case DataType::Int64:
      return divide_int64<std::int64_t>(data, count, divisor);
    case DataType::Uint64:
      return divide_int64<std::uint64_t>(data, count, divisor);
    case DataType::Float32:
      return divide_f32(static_cast<float*>(data), count, static_cast<float>(divisor));
    case DataType::Float64:
      return divide_f64(static_cast<double*>(data), count, static_cast<double>(divisor));
    case DataType::Float16:
    case DataType::Bfloat16:
      break;
  }
}

}  // namespace coll::reduce_detail
