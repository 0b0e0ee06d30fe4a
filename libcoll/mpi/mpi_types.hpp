// Which MPI data types and operations libcoll reduces exactly as MPI does.
#pragma once

#include <mpi.h>

#include <optional>

#include "coll/types.hpp"

namespace coll::mpi {

// Predefined contiguous C types only; derived, Fortran, 16-bit, complex types are not mapped.
std::optional<DataType> coll_type(MPI_Datatype type);
// MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN; user and logical/bitwise ops are not mapped.
std::optional<ReduceOp> coll_op(MPI_Op op);

}  // namespace coll::mpi
