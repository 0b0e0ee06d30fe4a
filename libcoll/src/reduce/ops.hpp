// The element-wise operations, written once: the auto-vectorized loops, the scalar tails and the
// portable paths all use these (fp16_kernels.cc mirrors them with intrinsics).
#pragma once

#include <type_traits>

#include "coll/types.hpp"

namespace coll::reduce_detail {

// Integer sum and product wrap modulo 2^bits, as in NCCL. The arithmetic is done in an unsigned
// type at least as wide as `unsigned` (so that promotion cannot overflow a signed int); the
// conversion back to T is modular since C++20.
template <class T>
using WrapType = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

struct SumOp {
  template <class T>
  [[gnu::always_inline]] static T apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(x) + static_cast<WrapType<T>>(y));
    } else {
      return x + y;
    }
  }
};

struct ProdOp {
  template <class T>
  [[gnu::always_inline]] static T apply(T x, T y) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<WrapType<T>>(x) * static_cast<WrapType<T>>(y));
    } else {
      return x * y;
    }
  }
};

// Min and max return x only when the comparison says x is strictly better, otherwise y. For
// floats: a NaN in y always propagates, a NaN only in x does not, and min(-0, +0) is +0 (y).
// This is exactly what MINPS/MAXPS do, so the compiler maps these onto single instructions.
struct MinOp {
  template <class T>
  [[gnu::always_inline]] static T apply(T x, T y) {
    return x < y ? x : y;
  }
};

struct MaxOp {
  template <class T>
  [[gnu::always_inline]] static T apply(T x, T y) {
    return x > y ? x : y;
  }
};

// finish_average for floats: x / divisor (the second operand is ignored; kernels pass b == a).
template <class S>
struct DivideBy {
  S divisor;
  template <class T>
  [[gnu::always_inline]] T apply(T x, T /*unused*/) const {
    return x / divisor;
  }
};

// Calls f(SumOp{}), f(ProdOp{}), ... for a run-time op; Avg accumulates as Sum.
template <class F>
[[gnu::always_inline]] inline void visit_op(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      f(SumOp{});
      return;
    case ReduceOp::Prod:
      f(ProdOp{});
      return;
    case ReduceOp::Max:
      f(MaxOp{});
      return;
    case ReduceOp::Min:
      f(MinOp{});
      return;
  }
}

}  // namespace coll::reduce_detail
