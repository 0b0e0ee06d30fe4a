// Data types and reduction operations, numbered as in coll.h (and NCCL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace coll {

enum class DataType : int {
  Int8 = 0,
  Uint8 = 1,
  Int32 = 2,
  Uint32 = 3,
  Int64 = 4,
  Uint64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  Bfloat16 = 9,
};
inline constexpr int kNumDataTypes = 10;

enum class ReduceOp : int { Sum = 0, Prod = 1, Max = 2, Min = 3, Avg = 4 };
inline constexpr int kNumReduceOps = 5;

namespace detail {
// Indexed by DataType. Inline: every collective asks several times, and a call cost more.
inline constexpr unsigned char kDtypeSizes[kNumDataTypes] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
[[noreturn]] void throw_invalid_dtype(DataType type);
}  // namespace detail

// Throws InvalidArgument for a value outside DataType.
inline std::size_t dtype_size(DataType type) {
  const auto index = static_cast<unsigned>(type);
  if (index >= static_cast<unsigned>(kNumDataTypes)) detail::throw_invalid_dtype(type);
  return detail::kDtypeSizes[index];
}
std::string_view dtype_name(DataType type);                  // "float32", "bfloat16", ...
std::string_view op_name(ReduceOp op);                       // "sum", "avg", ...
std::optional<DataType> parse_dtype(std::string_view name);  // also accepts nccl-tests names
std::optional<ReduceOp> parse_op(std::string_view name);

// One tensor of a fused all-reduce: `count` elements of `type` at `data`, reduced in place.
struct Tensor {
  void* data;
  std::size_t count;
  DataType type;
};

}  // namespace coll
