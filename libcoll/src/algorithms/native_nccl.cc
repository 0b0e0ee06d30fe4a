// "native_nccl": NCCL's ncclAllReduce as a baseline in the same harness. Available when libcoll
// was built with NCCL and this process sees a GPU. The NCCL communicator of a group is made on
// first use: the group's first rank creates the unique id and sends it over libcoll's own
// transport. Host buffers are staged through device memory (the copies are part of the time).
#ifdef COLL_HAVE_NCCL

#include <cuda_runtime.h>
#include <nccl.h>

#include <map>
#include <vector>

#include "algorithms/registry.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

void check_cuda(cudaError_t code, const char* what) {
  if (code != cudaSuccess) {
    throw Error(Status::SystemError, std::string(what) + " failed: " + cudaGetErrorString(code));
  }
}

void check_nccl(ncclResult_t code, const char* what) {
  if (code != ncclSuccess) {
    throw Error(Status::SystemError, std::string(what) + " failed: " + ncclGetErrorString(code));
  }
}

bool gpu_present() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

struct NcclGroup {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* staging = nullptr;  // device memory for host buffers, grown as needed
  std::size_t capacity = 0;
};

NcclGroup& group_state(const CollectiveContext& context) {
  static std::map<std::vector<int>, NcclGroup> groups;
  const Group& group = context.group;
  auto found = groups.find(group.ranks);
  if (found != groups.end()) return found->second;

  // One GPU per rank of a node: this rank's position among the group's ranks on its node.
  const int me = group.global(group.me);
  int local = 0;
  for (int i = 0; i < group.me; ++i) {
    local += context.node_of_rank[group.global(i)] == context.node_of_rank[me];
  }
  int devices = 0;
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check_cuda(cudaSetDevice(local % devices), "cudaSetDevice");

  ncclUniqueId id;
  if (group.me == 0) {
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::vector<Transport::Request> sends;
    for (int i = 1; i < group.size(); ++i) {
      sends.push_back(
          context.transport.send(group.global(i), context.tags.make(me, 0), &id, sizeof id));
    }
    context.transport.wait_all(sends);
  } else {
    auto request = context.transport.recv(group.global(0), context.tags.make(group.global(0), 0),
                                          &id, sizeof id);
    context.transport.wait(request);
  }
  NcclGroup state;
  check_nccl(ncclCommInitRank(&state.comm, group.size(), id, group.me), "ncclCommInitRank");
  check_cuda(cudaStreamCreate(&state.stream), "cudaStreamCreate");
  return groups[group.ranks] = state;
}

bool on_device(const void* pointer) {
  cudaPointerAttributes attributes{};
  return cudaPointerGetAttributes(&attributes, pointer) == cudaSuccess &&
         attributes.type == cudaMemoryTypeDevice;
}

void native_nccl_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  NcclGroup& state = group_state(context);
  const std::size_t bytes = args.count * dtype_size(args.type);
  const auto type = static_cast<ncclDataType_t>(args.type);  // same numbering as NCCL
  const auto op = static_cast<ncclRedOp_t>(args.op);
  if (on_device(args.recv) && (args.send == args.recv || on_device(args.send))) {
    check_nccl(ncclAllReduce(args.send, args.recv, args.count, type, op, state.comm, state.stream),
               "ncclAllReduce");
  } else {
    if (state.capacity < bytes) {
      if (state.staging != nullptr) cudaFree(state.staging);
      check_cuda(cudaMalloc(&state.staging, bytes), "cudaMalloc");
      state.capacity = bytes;
    }
    check_cuda(
        cudaMemcpyAsync(state.staging, args.send, bytes, cudaMemcpyHostToDevice, state.stream),
        "cudaMemcpyAsync to the GPU");
    check_nccl(
        ncclAllReduce(state.staging, state.staging, args.count, type, op, state.comm, state.stream),
        "ncclAllReduce");
    check_cuda(
        cudaMemcpyAsync(args.recv, state.staging, bytes, cudaMemcpyDeviceToHost, state.stream),
        "cudaMemcpyAsync from the GPU");
  }
  check_cuda(cudaStreamSynchronize(state.stream), "cudaStreamSynchronize");
}

// No cost formula: a baseline measured beside libcoll's own algorithms, never `auto`'s pick.
const AlgorithmRegistration kNativeNccl(
    {.name = "native_nccl",
     .run = native_nccl_allreduce,
     .summary = "NCCL's ncclAllReduce (needs a GPU; host buffers are staged through device memory)",
     .order = 60,
     .available = gpu_present});

}  // namespace
}  // namespace coll

#endif  // COLL_HAVE_NCCL
