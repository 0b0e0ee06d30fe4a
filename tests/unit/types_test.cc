// Data type and reduction op names, sizes and parsing (libcoll/src/core/types.cc).
#include <gtest/gtest.h>

#include <string>

#include "coll/coll.h"
#include "coll/error.hpp"
#include "coll/types.hpp"

namespace coll {
namespace {

TEST(Types, NumberingMatchesCApi) {
  EXPECT_EQ(static_cast<int>(DataType::Int8), collInt8);
  EXPECT_EQ(static_cast<int>(DataType::Uint8), collUint8);
  EXPECT_EQ(static_cast<int>(DataType::Int32), collInt32);
  EXPECT_EQ(static_cast<int>(DataType::Uint32), collUint32);
  EXPECT_EQ(static_cast<int>(DataType::Int64), collInt64);
  EXPECT_EQ(static_cast<int>(DataType::Uint64), collUint64);
  EXPECT_EQ(static_cast<int>(DataType::Float16), collFloat16);
  EXPECT_EQ(static_cast<int>(DataType::Float32), collFloat32);
  EXPECT_EQ(static_cast<int>(DataType::Float64), collFloat64);
  EXPECT_EQ(static_cast<int>(DataType::Bfloat16), collBfloat16);
  EXPECT_EQ(kNumDataTypes, collNumTypes);
  EXPECT_EQ(static_cast<int>(ReduceOp::Avg), collAvg);
  EXPECT_EQ(kNumReduceOps, collNumOps);
}

TEST(Types, SizesAndNames) {
  struct Row {
    DataType type;
    std::size_t size;
    const char* name;
  };
  const Row rows[] = {
      {DataType::Int8, 1, "int8"},       {DataType::Uint8, 1, "uint8"},
      {DataType::Int32, 4, "int32"},     {DataType::Uint32, 4, "uint32"},
      {DataType::Int64, 8, "int64"},     {DataType::Uint64, 8, "uint64"},
      {DataType::Float16, 2, "float16"}, {DataType::Float32, 4, "float32"},
      {DataType::Float64, 8, "float64"}, {DataType::Bfloat16, 2, "bfloat16"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(dtype_size(row.type), row.size) << row.name;
    EXPECT_EQ(dtype_name(row.type), row.name);
    EXPECT_EQ(parse_dtype(row.name), row.type) << row.name;
  }
}

TEST(Types, ParsesNcclTestsAndShortSpellings) {
  EXPECT_EQ(parse_dtype("half"), DataType::Float16);
  EXPECT_EQ(parse_dtype("float"), DataType::Float32);
  EXPECT_EQ(parse_dtype("double"), DataType::Float64);
  EXPECT_EQ(parse_dtype("fp16"), DataType::Float16);
  EXPECT_EQ(parse_dtype("fp32"), DataType::Float32);
  EXPECT_EQ(parse_dtype("fp64"), DataType::Float64);
  EXPECT_EQ(parse_dtype("bf16"), DataType::Bfloat16);
  EXPECT_EQ(parse_dtype("char"), DataType::Int8);
  EXPECT_EQ(parse_dtype("int"), DataType::Int32);
  EXPECT_EQ(parse_dtype("FP16"), DataType::Float16);
  EXPECT_EQ(parse_dtype("BFloat16"), DataType::Bfloat16);
}

TEST(Types, RejectsUnknownTypeNames) {
  for (const char* bad : {"", "int16", "float8", "bfloat", "float32 ", " half", "all"}) {
    EXPECT_FALSE(parse_dtype(bad).has_value()) << '"' << bad << '"';
  }
}

TEST(Types, OpNamesRoundTrip) {
  const char* names[] = {"sum", "prod", "max", "min", "avg"};
  for (int i = 0; i < kNumReduceOps; ++i) {
    const auto op = static_cast<ReduceOp>(i);
    EXPECT_EQ(op_name(op), names[i]);
    EXPECT_EQ(parse_op(names[i]), op);
  }
  EXPECT_EQ(parse_op("SUM"), ReduceOp::Sum);
  EXPECT_FALSE(parse_op("").has_value());
  EXPECT_FALSE(parse_op("mean").has_value());
  EXPECT_FALSE(parse_op("premulsum").has_value());
}

TEST(Types, OutOfRangeValues) {
  const auto bad_type = static_cast<DataType>(kNumDataTypes);
  EXPECT_EQ(dtype_name(bad_type), "invalid");
  EXPECT_EQ(dtype_name(static_cast<DataType>(-1)), "invalid");
  EXPECT_EQ(op_name(static_cast<ReduceOp>(kNumReduceOps)), "invalid");
  try {
    dtype_size(bad_type);
    FAIL() << "dtype_size accepted an invalid type";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("10"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace coll
