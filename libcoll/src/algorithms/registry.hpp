// The all-reduce algorithms libcoll offers, by name. Each algorithm's file registers itself
// with a static AlgorithmRegistration, so adding an algorithm touches no shared file.
#pragma once

#include <span>
#include <string_view>

#include "algorithms/collective.hpp"

namespace coll {

using AllreduceFn = void (*)(const CollectiveContext&, const AllreduceArgs&);

struct AlgorithmInfo {
  std::string_view name;
  AllreduceFn run;
  std::string_view summary;
  int order;  // listing position (ring, the reference, first)
  // False when nccl-tests' busbw = algbw * 2(n-1)/n does not describe the algorithm's traffic
  // (parameter server): collbench then marks the column.
  bool standard_busbw = true;
  // Null when always usable; otherwise says whether this process can run it (an MPI job, a GPU).
  bool (*available)() = nullptr;
  // Whether it accepts buffers in device memory (AllreduceArgs' memory types); host-only
  // algorithms are refused device buffers with a clear error instead of crashing on them.
  bool device_memory = false;
};

// Sorted by `order`, including ones not available in this process. Complete once static
// initialization of libcoll is done.
std::span<const AlgorithmInfo> allreduce_algorithms();
bool is_available(const AlgorithmInfo& info);
const AlgorithmInfo* find_algorithm(std::string_view name);  // nullptr when unknown

// Throws InvalidArgument "device memory is not supported by algorithm 'ring' yet ..." when a
// buffer of `args` is in device memory and the algorithm does not accept it.
void check_memory_supported(const AlgorithmInfo& info, const AllreduceArgs& args);

struct AlgorithmRegistration {
  explicit AlgorithmRegistration(const AlgorithmInfo& info);
};

}  // namespace coll
