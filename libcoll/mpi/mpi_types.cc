// MPI handles are pointers in Open MPI and need not be constants elsewhere, so they are compared
// one by one rather than switched on.
#include "mpi_types.hpp"

#include <climits>
#include <utility>

namespace coll::mpi {

std::optional<DataType> coll_type(MPI_Datatype type) {
  static_assert(sizeof(long) == 8 && sizeof(int) == 4, "MPI_LONG and MPI_INT sizes");
  // Made once: every interposed call looks its type up here, MPI_FLOAT first.
  static const std::pair<MPI_Datatype, DataType> known[] = {
      {MPI_FLOAT, DataType::Float32},
      {MPI_DOUBLE, DataType::Float64},
      {MPI_INT, DataType::Int32},
      {MPI_INT32_T, DataType::Int32},
      {MPI_UNSIGNED, DataType::Uint32},
      {MPI_UINT32_T, DataType::Uint32},
      {MPI_LONG, DataType::Int64},
      {MPI_LONG_LONG, DataType::Int64},
      {MPI_INT64_T, DataType::Int64},
      {MPI_UNSIGNED_LONG, DataType::Uint64},
      {MPI_UNSIGNED_LONG_LONG, DataType::Uint64},
      {MPI_UINT64_T, DataType::Uint64},
      {MPI_SIGNED_CHAR, DataType::Int8},
      {MPI_INT8_T, DataType::Int8},
      {MPI_UNSIGNED_CHAR, DataType::Uint8},
      {MPI_UINT8_T, DataType::Uint8},
  };
  for (const auto& [handle, mapped] : known) {
    if (type == handle) return mapped;
  }
  return std::nullopt;
}

std::optional<ReduceOp> coll_op(MPI_Op op) {
  if (op == MPI_SUM) return ReduceOp::Sum;
  if (op == MPI_PROD) return ReduceOp::Prod;
  if (op == MPI_MAX) return ReduceOp::Max;
  if (op == MPI_MIN) return ReduceOp::Min;
  return std::nullopt;
}

}  // namespace coll::mpi
