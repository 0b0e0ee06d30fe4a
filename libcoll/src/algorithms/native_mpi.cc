// "native_mpi": the MPI library's own MPI_Allreduce, as a baseline measured in the same harness.
// Available when the process runs under mpirun. Sub-groups get their own communicator, made once
// with MPI_Comm_create_group (collective over the group's members only) and cached.
#include <mpi.h>

#include <cstdlib>
#include <limits>
#include <map>
#include <vector>

#include "algorithms/registry.hpp"
#include "bootstrap/bootstrap.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

bool running_under_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  return initialized != 0 || launched_by_mpi();
}

MPI_Comm communicator_for(const Group& group) {
  static std::map<std::vector<int>, MPI_Comm> cache;
  auto found = cache.find(group.ranks);
  if (found != cache.end()) return found->second;
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (group.ranks.back() >= world_size) {
    throw Error(Status::InvalidUsage, "native_mpi: the communicator's ranks are not MPI ranks");
  }
  MPI_Group world, members;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, group.size(), group.ranks.data(), &members);
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_create_group(MPI_COMM_WORLD, members, 0, &comm), "MPI_Comm_create_group");
  MPI_Group_free(&members);
  MPI_Group_free(&world);
  return cache[group.ranks] = comm;
}

// float16 and bfloat16 have no MPI type: reduce them with libcoll's kernels in a user op.
template <DataType kType, ReduceOp kOp>
void reduce_16bit(void* in, void* inout, int* length, MPI_Datatype*) {
  reduce(kType, kOp, inout, inout, in, static_cast<std::size_t>(*length));
}

template <DataType kType>
MPI_Op user_op(ReduceOp op) {
  static MPI_Op made[kNumReduceOps] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL,
                                       MPI_OP_NULL};
  static MPI_User_function* const functions[kNumReduceOps] = {
      reduce_16bit<kType, ReduceOp::Sum>, reduce_16bit<kType, ReduceOp::Prod>,
      reduce_16bit<kType, ReduceOp::Max>, reduce_16bit<kType, ReduceOp::Min>,
      reduce_16bit<kType, ReduceOp::Sum>};  // Avg: sum, then divide once
  MPI_Op& slot = made[static_cast<int>(op)];
  if (slot == MPI_OP_NULL) MPI_Op_create(functions[static_cast<int>(op)], 1, &slot);
  return slot;
}

MPI_Datatype mpi_type(DataType type) {
  switch (type) {
    case DataType::Int8:
      return MPI_INT8_T;
    case DataType::Uint8:
      return MPI_UINT8_T;
    case DataType::Int32:
      return MPI_INT32_T;
    case DataType::Uint32:
      return MPI_UINT32_T;
    case DataType::Int64:
      return MPI_INT64_T;
    case DataType::Uint64:
      return MPI_UINT64_T;
    case DataType::Float32:
      return MPI_FLOAT;
    case DataType::Float64:
      return MPI_DOUBLE;
    case DataType::Float16:
    case DataType::Bfloat16:
      return MPI_UINT16_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op mpi_op(DataType type, ReduceOp op) {
  if (type == DataType::Float16) return user_op<DataType::Float16>(op);
  if (type == DataType::Bfloat16) return user_op<DataType::Bfloat16>(op);
  switch (op) {
    case ReduceOp::Prod:
      return MPI_PROD;
    case ReduceOp::Max:
      return MPI_MAX;
    case ReduceOp::Min:
      return MPI_MIN;
    default:
      return MPI_SUM;  // Avg: sum, then divide once below
  }
}

void native_mpi_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  if (args.count > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw Error(Status::InvalidArgument, "native_mpi: count exceeds MPI's int range");
  }
  const MPI_Comm comm = communicator_for(context.group);
  const void* send = args.send == args.recv ? MPI_IN_PLACE : args.send;
  check_mpi(MPI_Allreduce(send, args.recv, static_cast<int>(args.count), mpi_type(args.type),
                          mpi_op(args.type, args.op), comm),
            "MPI_Allreduce");
  if (args.op == ReduceOp::Avg) {
    finish_average(args.type, args.recv, args.count, context.group.size());
  }
}

// No cost formula: a baseline measured beside libcoll's own algorithms, never `auto`'s pick.
const AlgorithmRegistration kNativeMpi(
    {.name = "native_mpi",
     .run = native_mpi_allreduce,
     .summary = "the MPI library's MPI_Allreduce (under mpirun only)",
     .order = 50,
     .available = running_under_mpi});

}  // namespace
}  // namespace coll
