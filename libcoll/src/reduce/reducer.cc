// The public entry points: argument checks, then dispatch on the data type to a kernel family.
//
// Semantics beyond reducer.hpp:
// - Buffers are aligned to their element size; dst is a, b, or overlaps neither.
// - Integer sum and prod wrap around (two's complement), as NCCL's do.
// - Float min/max are `a < b ? a : b` and `a > b ? a : b`: b is returned unless a compares
//   strictly better, so a NaN in b propagates, a NaN only in a is dropped, and ties between -0
//   and +0 give b. So when accumulating in place (dst == a), an incoming NaN is kept but an
//   accumulated one can be dropped by a later step: min/max results with NaN depend on order.
// - Float16/bfloat16 keep subnormals (no flush to zero); NaN stays NaN, overflow becomes inf.
#include "reduce/reducer.hpp"

#include <cstdint>
#include <string>

#include "coll/error.hpp"
#include "reduce/kernels.hpp"

namespace coll {
namespace {

void check_op(ReduceOp op) {
  const int i = static_cast<int>(op);
  if (i < 0 || i >= kNumReduceOps) {
    throw Error(Status::InvalidArgument, "invalid reduction op " + std::to_string(i) +
                                             " (expected sum, prod, max, min, avg)");
  }
}

}  // namespace

void reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
            std::size_t count) {
  check_op(op);
  (void)dtype_size(type);  // throws on an invalid type
  if (count == 0) return;
  using U16 = std::uint16_t;
  switch (type) {
    case DataType::Float16:
      reduce_detail::reduce_fp16(op, static_cast<U16*>(dst), static_cast<const U16*>(a),
                                 static_cast<const U16*>(b), count);
      break;
    case DataType::Bfloat16:
      reduce_detail::reduce_bf16(op, static_cast<U16*>(dst), static_cast<const U16*>(a),
                                 static_cast<const U16*>(b), count);
      break;
    default:
      reduce_detail::reduce_native(type, op, dst, a, b, count);
  }
}

void finish_average(DataType type, void* data, std::size_t count, int divisor) {
  (void)dtype_size(type);
  if (divisor < 1) {
    throw Error(Status::InvalidArgument,
                "finish_average: divisor must be at least 1, got " + std::to_string(divisor));
  }
  if (count == 0 || divisor == 1) return;
  switch (type) {
    case DataType::Float16:
      return reduce_detail::average_fp16(static_cast<std::uint16_t*>(data), count, divisor);
    case DataType::Bfloat16:
      return reduce_detail::average_bf16(static_cast<std::uint16_t*>(data), count, divisor);
    default:
      return reduce_detail::average_native(type, data, count, divisor);
  }
}

}  // namespace coll
