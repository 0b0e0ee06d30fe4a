// Names and sizes of data types and reduction operations, and parsing of user spellings.
#include "coll/types.hpp"

#include <array>
#include <string>

#include "coll/error.hpp"

namespace coll {
namespace {

struct TypeInfo {
  std::string_view name;
  std::size_t size;
};

// Indexed by DataType; the order is fixed by coll.h (and NCCL).
constexpr std::array<TypeInfo, kNumDataTypes> kTypes = {{
    {"int8", 1},
    {"uint8", 1},
    {"int32", 4},
    {"uint32", 4},
    {"int64", 8},
    {"uint64", 8},
    {"float16", 2},
    {"float32", 4},
    {"float64", 8},
    {"bfloat16", 2},
}};

constexpr std::array<std::string_view, kNumReduceOps> kOps = {"sum", "prod", "max", "min", "avg"};

struct Alias {
  std::string_view name;
  DataType type;
};

// Other spellings: nccl-tests (-d half/float/double), NCCL's enum names and short forms.
constexpr std::array<Alias, 9> kAliases = {{
    {"char", DataType::Int8},
    {"int", DataType::Int32},
    {"half", DataType::Float16},
    {"fp16", DataType::Float16},
    {"float", DataType::Float32},
    {"fp32", DataType::Float32},
    {"double", DataType::Float64},
    {"fp64", DataType::Float64},
    {"bf16", DataType::Bfloat16},
}};

bool valid(DataType type) {
  return static_cast<int>(type) >= 0 && static_cast<int>(type) < kNumDataTypes;
}

// Command lines are typed by people: accept "FP16" as well as "fp16".
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::size_t dtype_size(DataType type) {
  if (!valid(type)) {
    throw Error(Status::InvalidArgument,
                "invalid data type " + std::to_string(static_cast<int>(type)) + " (expected 0.." +
                    std::to_string(kNumDataTypes - 1) + ")");
  }
  return kTypes[static_cast<std::size_t>(type)].size;
}

std::string_view dtype_name(DataType type) {
  return valid(type) ? kTypes[static_cast<std::size_t>(type)].name : "invalid";
}

std::string_view op_name(ReduceOp op) {
  const int i = static_cast<int>(op);
  return i >= 0 && i < kNumReduceOps ? kOps[static_cast<std::size_t>(i)] : "invalid";
}

std::optional<DataType> parse_dtype(std::string_view name) {
  const std::string key = lower(name);
  for (std::size_t i = 0; i < kTypes.size(); ++i) {
    if (kTypes[i].name == key) return static_cast<DataType>(i);
  }
  for (const Alias& alias : kAliases) {
    if (alias.name == key) return alias.type;
  }
  return std::nullopt;
}

std::optional<ReduceOp> parse_op(std::string_view name) {
  const std::string key = lower(name);
  for (std::size_t i = 0; i < kOps.size(); ++i) {
    if (kOps[i] == key) return static_cast<ReduceOp>(i);
  }
  return std::nullopt;
}

}  // namespace coll
