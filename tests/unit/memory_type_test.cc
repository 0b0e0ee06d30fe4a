// Buffers carry a memory type: host memory is classified host (here, without a GPU, detection
// must stay out of the way), and device buffers are refused by host-only algorithms. Where a
// GPU and the CUDA runtime exist, a real device buffer is classified and refused through the
// public API; elsewhere that test reports itself skipped.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "coll/comm.hpp"
#include "coll/error.hpp"
#include "core/memory_type.hpp"

namespace {

TEST(MemoryType, HostMemoryIsHost) {
  int on_stack = 0;
  const auto on_heap = std::make_unique<std::vector<double>>(1024);
  static const char in_data[] = "static";
  EXPECT_EQ(coll::memory_type_of(&on_stack), coll::MemoryType::Host);
  EXPECT_EQ(coll::memory_type_of(on_heap->data()), coll::MemoryType::Host);
  EXPECT_EQ(coll::memory_type_of(in_data), coll::MemoryType::Host);
  EXPECT_EQ(coll::memory_type_of(nullptr), coll::MemoryType::Host);
}

TEST(MemoryType, HostOnlyAlgorithmsRefuseDeviceBuffers) {
  const coll::AlgorithmInfo* ring = coll::find_algorithm("ring");
  ASSERT_NE(ring, nullptr);
  float data[4] = {};
  coll::AllreduceArgs args{data, data, 4, coll::DataType::Float32, coll::ReduceOp::Sum};
  EXPECT_NO_THROW(coll::check_memory_supported(*ring, args));
  args.recv_memory = coll::MemoryType::Device;
  try {
    coll::check_memory_supported(*ring, args);
    FAIL() << "expected a refusal";
  } catch (const coll::Error& error) {
    EXPECT_EQ(error.status(), coll::Status::InvalidArgument);
    EXPECT_EQ(std::string(error.what())
                  .rfind("device memory is not supported by algorithm 'ring' yet", 0),
              0u)
        << error.what();
  }
}

TEST(MemoryType, NativeNcclAcceptsDeviceBuffers) {
  const coll::AlgorithmInfo* nccl = coll::find_algorithm("native_nccl");
  ASSERT_NE(nccl, nullptr);
  coll::AllreduceArgs args{nullptr, nullptr, 0, coll::DataType::Float32, coll::ReduceOp::Sum};
  args.send_memory = args.recv_memory = coll::MemoryType::Device;
  EXPECT_NO_THROW(coll::check_memory_supported(*nccl, args));
}

// The CUDA runtime's allocator, when this machine has one and a GPU.
struct CudaRuntime {
  int (*malloc)(void**, std::size_t) = nullptr;
  int (*free)(void*) = nullptr;
  bool gpu = false;
  CudaRuntime() {
    void* lib = dlopen("libcudart.so.13", RTLD_NOW);
    if (lib == nullptr) lib = dlopen("libcudart.so.12", RTLD_NOW);
    if (lib == nullptr) return;
    auto count = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cudaGetDeviceCount"));
    malloc = reinterpret_cast<int (*)(void**, std::size_t)>(dlsym(lib, "cudaMalloc"));
    free = reinterpret_cast<int (*)(void*)>(dlsym(lib, "cudaFree"));
    int devices = 0;
    gpu = count && malloc && free && count(&devices) == 0 && devices > 0;
  }
};

TEST(MemoryType, DeviceBufferIsRefusedThroughTheApi) {
  CudaRuntime cuda;
  if (!cuda.gpu) GTEST_SKIP() << "no GPU with a CUDA runtime here: device path not exercised";
  void* device = nullptr;
  ASSERT_EQ(cuda.malloc(&device, 1024), 0);
  EXPECT_EQ(coll::memory_type_of(device), coll::MemoryType::Device);
  auto comm = coll::Comm::from_environment();
  try {
    comm->allreduce(device, device, 256, coll::DataType::Float32, coll::ReduceOp::Sum, "ring");
    ADD_FAILURE() << "expected a refusal";
  } catch (const coll::Error& error) {
    EXPECT_NE(std::string(error.what()).find("device memory is not supported by algorithm 'ring'"),
              std::string::npos)
        << error.what();
  }
  cuda.free(device);
}

}  // namespace
