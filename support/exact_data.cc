#include "exact_data.hpp"

#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/half.hpp"

namespace collbench {
namespace {

using coll::DataType;
using coll::ReduceOp;

// Small non-negative integers: sums over a few hundred ranks stay exact even in bfloat16's
// 8-bit significand only for few ranks, so sums use 0..3 (exact up to 85 ranks in bf16).
std::int64_t input_value(ReduceOp op, int rank, std::size_t index) {
  const std::size_t mix = index * 7 + static_cast<std::size_t>(rank) * 13;
  switch (op) {
    case ReduceOp::Prod:
      return mix % 11 == 0 ? 2 : 1;  // a few factors of two: exact in every float format
    case ReduceOp::Min:
    case ReduceOp::Max:
      return static_cast<std::int64_t>((index * 31 + static_cast<std::size_t>(rank) * 17) % 97);
    default:
      return static_cast<std::int64_t>(mix % 4);
  }
}

// The exact reduction of the inputs, before averaging.
std::int64_t reduced_value(ReduceOp op, int ranks, std::size_t index) {
  std::int64_t result = input_value(op, 0, index);
  for (int r = 1; r < ranks; ++r) {
    const std::int64_t value = input_value(op, r, index);
    switch (op) {
      case ReduceOp::Prod:
        result *= value;
        break;
      case ReduceOp::Min:
        result = value < result ? value : result;
        break;
      case ReduceOp::Max:
        result = value > result ? value : result;
        break;
      default:
        result += value;
    }
  }
  return result;
}

// Integers wrap modulo 2^bits while reducing (as the library's do), then divide (truncating).
template <typename T>
void store_integer(std::int64_t value, int divisor, void* at) {
  const T wrapped = static_cast<T>(value);
  *static_cast<T*>(at) = static_cast<T>(wrapped / static_cast<T>(divisor));
}

// Stores `value` (or, for avg, value / ranks) in the element's type, with the library's
// documented average semantics: integers truncate, floats divide in their own arithmetic
// (fp16/bf16 in float32, then round to nearest-even).
void store(DataType type, std::int64_t value, int divisor, void* at) {
  const float f = static_cast<float>(value) / static_cast<float>(divisor);
  switch (type) {
    case DataType::Int8:
      store_integer<std::int8_t>(value, divisor, at);
      break;
    case DataType::Uint8:
      store_integer<std::uint8_t>(value, divisor, at);
      break;
    case DataType::Int32:
      store_integer<std::int32_t>(value, divisor, at);
      break;
    case DataType::Uint32:
      store_integer<std::uint32_t>(value, divisor, at);
      break;
    case DataType::Int64:
      store_integer<std::int64_t>(value, divisor, at);
      break;
    case DataType::Uint64:
      store_integer<std::uint64_t>(value, divisor, at);
      break;
    case DataType::Float16:
      *static_cast<std::uint16_t*>(at) = coll::half::float_to_fp16(f);
      break;
    case DataType::Bfloat16:
      *static_cast<std::uint16_t*>(at) = coll::half::float_to_bf16(f);
      break;
    case DataType::Float32:
      *static_cast<float*>(at) = f;
      break;
    case DataType::Float64:
      *static_cast<double*>(at) = static_cast<double>(value) / static_cast<double>(divisor);
      break;
  }
}

}  // namespace

void fill_input(DataType type, ReduceOp op, int rank, void* data, std::size_t count,
                std::size_t first) {
  const std::size_t size = coll::dtype_size(type);
  auto* bytes = static_cast<std::byte*>(data);
  for (std::size_t i = 0; i < count; ++i) {
    store(type, input_value(op, rank, first + i), 1, bytes + i * size);
  }
}

std::size_t count_wrong(DataType type, ReduceOp op, int ranks, const void* data, std::size_t count,
                        std::size_t first) {
  const std::size_t size = coll::dtype_size(type);
  const auto* bytes = static_cast<const std::byte*>(data);
  const int divisor = op == ReduceOp::Avg ? ranks : 1;
  std::size_t wrong = 0;
  alignas(8) std::byte expected[8];
  for (std::size_t i = 0; i < count; ++i) {
    store(type, reduced_value(op, ranks, first + i), divisor, expected);
    wrong += std::memcmp(expected, bytes + i * size, size) != 0;
  }
  return wrong;
}

std::size_t count_unlike_input(DataType type, ReduceOp op, int rank, const void* data,
                               std::size_t count, std::size_t first) {
  const std::size_t elem = coll::dtype_size(type);
  std::vector<std::byte> expected(count * elem + 1);
  fill_input(type, op, rank, expected.data(), count, first);
  const auto* actual = static_cast<const std::byte*>(data);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    wrong += std::memcmp(expected.data() + i * elem, actual + i * elem, elem) != 0;
  }
  return wrong;
}

}  // namespace collbench
