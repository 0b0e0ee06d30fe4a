// Element-wise reduction kernels on host memory: the gamma term of every algorithm.
#pragma once

#include <cstddef>

#include "coll/types.hpp"

namespace coll {

// dst[i] = a[i] (op) b[i] for i < count. dst may alias a or b (in-place accumulation).
// Avg accumulates as Sum; finish_average divides once at the end. Float16 and Bfloat16 are
// widened to float32 for each operation and rounded back to nearest-even.
void reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b, std::size_t count);

// For ReduceOp::Avg: data[i] = data[i] / divisor (integer types truncate toward zero, as NCCL).
void finish_average(DataType type, void* data, std::size_t count, int divisor);

}  // namespace coll
