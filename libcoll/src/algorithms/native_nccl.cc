// "native_nccl": NCCL's ncclAllReduce as a baseline in the same harness. libnccl.so.2 and the
// CUDA runtime are opened with dlopen on first use, so libcoll loads (and every other algorithm
// runs) where they are absent; the algorithm is available when both load and a GPU is present.
// The NCCL communicator of a group is made on first use: the group's first rank creates the
// unique id and sends it over libcoll's own transport. Host buffers are staged through device
// memory (the copies are part of the time).
#include <dlfcn.h>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

// The few entry points used, by their documented C signatures (cuda_runtime_api.h, nccl.h), so
// that neither CUDA's headers nor its libraries are needed to build. Opaque handles (streams,
// communicators) are pointers, enumerations ints; ncclUniqueId is 128 bytes passed by value.
struct NcclUniqueId {
  char internal[128];
};
constexpr int kCudaMemcpyDefault = 4;  // direction from the pointers (unified addressing)

struct CudaLibraries {
  int (*cudaGetDeviceCount)(int*);
  int (*cudaSetDevice)(int);
  int (*cudaStreamCreate)(void**);
  int (*cudaStreamSynchronize)(void*);
  int (*cudaMalloc)(void**, std::size_t);
  int (*cudaFree)(void*);
  int (*cudaMemcpyAsync)(void*, const void*, std::size_t, int, void*);
  const char* (*cudaGetErrorString)(int);
  int (*ncclGetUniqueId)(NcclUniqueId*);
  int (*ncclCommInitRank)(void**, int, NcclUniqueId, int);
  int (*ncclAllReduce)(const void*, void*, std::size_t, int, int, void*, void*);
  const char* (*ncclGetErrorString)(int);
  std::string error;  // why they could not be loaded; empty when loaded
};

void* open_first(const std::vector<const char*>& names, std::string& error) {
  for (const char* name : names) {
    if (void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return library;
  }
  error = std::string("cannot load ") + names.front() + " (" + dlerror() + ")";
  return nullptr;
}

template <typename Fn>
void resolve(void* library, const char* name, Fn& fn, std::string& error) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (fn == nullptr && error.empty()) error = std::string("missing symbol ") + name;
}

// Loaded once per process and never closed (CUDA does not support unloading after use).
const CudaLibraries& libraries() {
  static const CudaLibraries loaded = [] {
    CudaLibraries l{};
    void* cudart = open_first({"libcudart.so.13", "libcudart.so.12", "libcudart.so"}, l.error);
    void* nccl = cudart ? open_first({"libnccl.so.2", "libnccl.so"}, l.error) : nullptr;
    if (!cudart || !nccl) return l;
    resolve(cudart, "cudaGetDeviceCount", l.cudaGetDeviceCount, l.error);
    resolve(cudart, "cudaSetDevice", l.cudaSetDevice, l.error);
    resolve(cudart, "cudaStreamCreate", l.cudaStreamCreate, l.error);
    resolve(cudart, "cudaStreamSynchronize", l.cudaStreamSynchronize, l.error);
    resolve(cudart, "cudaMalloc", l.cudaMalloc, l.error);
    resolve(cudart, "cudaFree", l.cudaFree, l.error);
    resolve(cudart, "cudaMemcpyAsync", l.cudaMemcpyAsync, l.error);
    resolve(cudart, "cudaGetErrorString", l.cudaGetErrorString, l.error);
    resolve(nccl, "ncclGetUniqueId", l.ncclGetUniqueId, l.error);
    resolve(nccl, "ncclCommInitRank", l.ncclCommInitRank, l.error);
    resolve(nccl, "ncclAllReduce", l.ncclAllReduce, l.error);
    resolve(nccl, "ncclGetErrorString", l.ncclGetErrorString, l.error);
    return l;
  }();
  return loaded;
}

const CudaLibraries& cuda() {
  const CudaLibraries& l = libraries();
  if (!l.error.empty()) {
    throw Error(Status::SystemError, "native_nccl needs NCCL and the CUDA runtime: " + l.error);
  }
  return l;
}

void check_cuda(int code, const char* what) {
  if (code != 0) {
    throw Error(Status::SystemError,
                std::string(what) + " failed: " + cuda().cudaGetErrorString(code));
  }
}

void check_nccl(int code, const char* what) {
  if (code != 0) {
    throw Error(Status::SystemError,
                std::string(what) + " failed: " + cuda().ncclGetErrorString(code));
  }
}

bool gpu_present() {
  const CudaLibraries& l = libraries();
  int devices = 0;
  return l.error.empty() && l.cudaGetDeviceCount(&devices) == 0 && devices > 0;
}

struct NcclGroup {
  void* comm = nullptr;
  void* stream = nullptr;
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
  check_cuda(cuda().cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check_cuda(cuda().cudaSetDevice(local % devices), "cudaSetDevice");

  NcclUniqueId id;
  if (group.me == 0) {
    check_nccl(cuda().ncclGetUniqueId(&id), "ncclGetUniqueId");
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
  check_nccl(cuda().ncclCommInitRank(&state.comm, group.size(), id, group.me), "ncclCommInitRank");
  check_cuda(cuda().cudaStreamCreate(&state.stream), "cudaStreamCreate");
  return groups[group.ranks] = state;
}

void native_nccl_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  NcclGroup& state = group_state(context);
  const CudaLibraries& l = cuda();
  const std::size_t bytes = args.count * dtype_size(args.type);
  const int type = static_cast<int>(args.type);  // same numbering as NCCL's
  const int op = static_cast<int>(args.op);
  if (args.send_memory == MemoryType::Device && args.recv_memory == MemoryType::Device) {
    check_nccl(
        l.ncclAllReduce(args.send, args.recv, args.count, type, op, state.comm, state.stream),
        "ncclAllReduce");
  } else {  // a host buffer (either side): stage through device memory
    if (state.capacity < bytes) {
      if (state.staging != nullptr) l.cudaFree(state.staging);
      check_cuda(l.cudaMalloc(&state.staging, bytes), "cudaMalloc");
      state.capacity = bytes;
    }
    check_cuda(l.cudaMemcpyAsync(state.staging, args.send, bytes, kCudaMemcpyDefault, state.stream),
               "cudaMemcpyAsync to the GPU");
    check_nccl(l.ncclAllReduce(state.staging, state.staging, args.count, type, op, state.comm,
                               state.stream),
               "ncclAllReduce");
    check_cuda(l.cudaMemcpyAsync(args.recv, state.staging, bytes, kCudaMemcpyDefault, state.stream),
               "cudaMemcpyAsync from the GPU");
  }
  check_cuda(l.cudaStreamSynchronize(state.stream), "cudaStreamSynchronize");
}

// No cost formula: a baseline measured beside libcoll's own algorithms, never `auto`'s pick.
const AlgorithmRegistration kNativeNccl({
    .name = "native_nccl",
    .run = native_nccl_allreduce,
    .summary = "NCCL's ncclAllReduce (needs libnccl.so.2 and a GPU; host buffers are staged "
               "through device memory)",
    .order = 60,
    .available = gpu_present,
    .device_memory = true,
});

}  // namespace
}  // namespace coll
