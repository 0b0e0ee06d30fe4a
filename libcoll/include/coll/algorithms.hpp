// The all-reduce algorithms libcoll offers, as users and tools see them: the public view of the
// library's algorithm registry (names, what each does, whether this process can run it, whether
// the cost model prices it) and each algorithm's bus-bandwidth factor for reporting.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/tuning.hpp"

namespace coll {

// busbw = algbw * factor. `standard` is nccl-tests' definition for all-reduce, 2(n-1)/n;
// otherwise (parameter server) collbench marks the column and prints `definition`.
struct BusFactor {
  double factor = 0;
  bool standard = true;
  std::string definition;
};

struct AlgorithmDescription {
  std::string name;
  std::string summary;         // one line: what it does
  bool available = false;      // this process can run it (an MPI job, a GPU, ...)
  bool modeled = false;        // has a cost formula: `auto` may pick it
  bool device_memory = false;  // accepts buffers in device memory
};

// Every registered algorithm, available or not, in listing order (ring, the reference, first).
std::vector<AlgorithmDescription> describe_algorithms();
std::optional<AlgorithmDescription> describe_algorithm(std::string_view name);  // nullopt: unknown

// The algorithm's bus factor on `ranks` ranks under `tuning`; nccl-tests' 2(n-1)/n for names
// the registry does not know.
BusFactor bus_factor(std::string_view algorithm, int ranks, const Tuning& tuning);

}  // namespace coll
