// Bfloat16 kernels: widen to float32 (a shift), operate, round back to nearest-even. The
// conversions are branch-free integer code, so GCC vectorizes the whole loop for each ISA level.
// (VCVTNEPS2BF16 is not used: it flushes subnormals to zero.)
#include "coll/half.hpp"
#include "reduce/kernels.hpp"
#include "reduce/ops.hpp"

namespace coll::reduce_detail {
namespace {

template <class Op>
COLL_ALWAYS_INLINE inline void bf16_loop(std::uint16_t* dst, const std::uint16_t* a,
                                         const std::uint16_t* b, std::size_t n, Op op) {
  for (std::size_t i = 0; i < n; ++i) {
    dst[i] = half::float_to_bf16(op.apply(half::bf16_to_float(a[i]), half::bf16_to_float(b[i])));
  }
}

COLL_TARGET_CLONES void bf16_reduce(ReduceOp op, std::uint16_t* dst, const std::uint16_t* a,
                                    const std::uint16_t* b, std::size_t n) {
  visit_op(op, [&](auto o) COLL_ALWAYS_INLINE { bf16_loop(dst, a, b, n, o); });
}

COLL_TARGET_CLONES void bf16_divide(std::uint16_t* data, std::size_t n, float divisor) {
  bf16_loop(data, data, data, n, DivideBy<float>{divisor});
}

}  // namespace

void reduce_bf16(ReduceOp op, std::uint16_t* dst, const std::uint16_t* a, const std::uint16_t* b,
                 std::size_t count) {
  bf16_reduce(op, dst, a, b, count);
}

void average_bf16(std::uint16_t* data, std::size_t count, int divisor) {
  bf16_divide(data, count, static_cast<float>(divisor));
}

}  // namespace coll::reduce_detail
