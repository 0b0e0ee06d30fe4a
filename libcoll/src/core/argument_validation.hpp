// The checks each rank makes of its own call's arguments before any message: a bad type,
// operation, count, buffer or root fails with InvalidArgument naming the call (`where` is the
// communicator's prefix, `what` the collective). Comparing the calls across ranks is
// argument_check.hpp's.
#pragma once

#include <cstddef>
#include <string>

#include "coll/types.hpp"

namespace coll {

void check_type(const std::string& where, const char* what, DataType type);
void check_op(const std::string& where, const char* what, ReduceOp op);
// Refused up front, on every rank count: a buffer whose byte size does not fit in memory's
// address range (`blocks` buffers of `count` elements for the collectives that take one per rank).
void check_count(const std::string& where, const char* what, std::size_t count, DataType type,
                 std::size_t blocks = 1);
void check_buffer(const std::string& where, const char* what, const void* buffer,
                  std::size_t count);
void check_root(const std::string& where, const char* what, int root, int size);
// All of the above that apply to an all-reduce.
void validate_allreduce(const std::string& where, const void* send, const void* recv,
                        std::size_t count, DataType type, ReduceOp op);
// Point-to-point messages and fused tensors are copied by the CPU: host memory only.
void require_host(const std::string& where, const void* data, const char* what);

}  // namespace coll
