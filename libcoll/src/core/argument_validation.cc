#include "core/argument_validation.hpp"

#include <limits>

#include "coll/error.hpp"
#include "core/memory_type.hpp"

namespace coll {

void check_type(const std::string& where, const char* what, DataType type) {
  if (static_cast<unsigned>(type) >= kNumDataTypes) {
    throw Error(Status::InvalidArgument,
                where + what + ": invalid data type " + std::to_string(int(type)));
  }
}

void check_op(const std::string& where, const char* what, ReduceOp op) {
  if (static_cast<unsigned>(op) >= kNumReduceOps) {
    throw Error(Status::InvalidArgument,
                where + what + ": invalid operation " + std::to_string(int(op)));
  }
}

void check_count(const std::string& where, const char* what, std::size_t count, DataType type,
                 std::size_t blocks) {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, dtype_size(type), &bytes) ||
      __builtin_mul_overflow(bytes, blocks, &bytes) ||
      bytes > std::size_t(std::numeric_limits<std::ptrdiff_t>::max())) {
    throw Error(Status::InvalidArgument,
                where + what + ": count " + std::to_string(count) + " of " +
                    std::string(dtype_name(type)) +
                    (blocks > 1 ? " times " + std::to_string(blocks) + " ranks" : "") +
                    " is more bytes than a buffer can hold");
  }
}

void check_buffer(const std::string& where, const char* what, const void* buffer,
                  std::size_t count) {
  if (count > 0 && buffer == nullptr) {
    throw Error(Status::InvalidArgument,
                where + what + ": null buffer with count " + std::to_string(count));
  }
}

void check_root(const std::string& where, const char* what, int root, int size) {
  if (root < 0 || root >= size) {
    throw Error(Status::InvalidArgument, where + what + ": root " + std::to_string(root) +
                                             " is not a rank of this communicator (size " +
                                             std::to_string(size) + ")");
  }
}

void validate_allreduce(const std::string& where, const void* send, const void* recv,
                        std::size_t count, DataType type, ReduceOp op) {
  check_type(where, "allreduce", type);
  check_op(where, "allreduce", op);
  check_count(where, "allreduce", count, type);
  check_buffer(where, "allreduce", send, count);
  check_buffer(where, "allreduce", recv, count);
}

void require_host(const std::string& where, const void* data, const char* what) {
  if (memory_type_of(data) == MemoryType::Device) {
    throw Error(Status::InvalidArgument,
                where + "device memory is not supported by " + what + " yet: pass host buffers");
  }
}

}  // namespace coll
