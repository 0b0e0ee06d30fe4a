// Names and sizes of data types and reduction operations, and parsing of user spellings.
#include "coll/types.hpp"

#include <array>
#include <string>

#include "coll/error.hpp"

namespace coll {
namespace {

// Indexed by DataType; the order is fixed by coll.h (and NCCL). Sizes: detail::kDtypeSizes.
constexpr std::array<std::string_view, kNumDataTypes> kTypeNames = {
    "int8",   "uint8",   "int32",   "uint32",  "int64",
    "uint64", "float16", "float32", "float64", "bfloat16",
};

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

namespace detail {

void throw_invalid_dtype(DataType type) {
  throw Error(Status::InvalidArgument,
              "invalid data type " + std::to_string(static_cast<int>(type)) + " (expected 0.." +
                  std::to_string(kNumDataTypes - 1) + ")");
}

}  // namespace detail

std::string_view dtype_name(DataType type) {
  return valid(type) ? kTypeNames[static_cast<std::size_t>(type)] : "invalid";
}

std::string_view op_name(ReduceOp op) {
  const int i = static_cast<int>(op);
  return i >= 0 && i < kNumReduceOps ? kOps[static_cast<std::size_t>(i)] : "invalid";
}

std::optional<DataType> parse_dtype(std::string_view name) {
  const std::string key = lower(name);
  for (std::size_t i = 0; i < kTypeNames.size(); ++i) {
    if (kTypeNames[i] == key) return static_cast<DataType>(i);
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
