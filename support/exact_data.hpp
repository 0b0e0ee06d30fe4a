// Inputs whose reduction is exact in every data type, so every algorithm and transport must
// agree bit for bit with the reference, whatever order it reduces in. Rank r's element i is a
// small integer (or, for prod, 1 or 2) derived from (r, i); the expected result is computed
// independently of the library, element by element.
#pragma once

#include <cstddef>

#include "coll/types.hpp"

namespace collbench {

// Writes rank `rank`'s inputs for elements [first, first + count) of a tensor.
void fill_input(coll::DataType type, coll::ReduceOp op, int rank, void* data, std::size_t count,
                std::size_t first = 0);

// Elements of data[0, count) (elements [first, first + count) of the tensor) that differ
// bitwise from the reduction over `ranks` ranks' inputs.
std::size_t count_wrong(coll::DataType type, coll::ReduceOp op, int ranks, const void* data,
                        std::size_t count, std::size_t first = 0);

// Elements of data[0, count) that differ bitwise from rank `rank`'s inputs (as fill_input writes
// them for `op`) for elements [first, first + count): the check of a broadcast or all-gather.
std::size_t count_unlike_input(coll::DataType type, coll::ReduceOp op, int rank, const void* data,
                               std::size_t count, std::size_t first = 0);

}  // namespace collbench
