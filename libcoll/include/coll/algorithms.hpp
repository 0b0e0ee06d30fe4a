// The all-reduce algorithms libcoll offers, as users and tools see them: the public view of the
// library's algorithm registry (names, what each does, whether this process can run it, whether
// the cost model prices it) and each algorithm's bus-bandwidth factor for reporting.
#pragma once

#include <array>
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

// An option an algorithm declares with its registration (the parameter server's COLL_PS_SERVERS,
// hierarchical's COLL_HIER_INTER): Config reads it from the environment, a tool sets it in
// Tuning::algorithm_options, and the algorithm and its cost formula read it from the tuning.
struct AlgorithmOptionDescription {
  std::string variable;                 // COLL_PS_SERVERS
  std::string default_value;            // as text: "0"
  std::string accepted;                 // "an integer in [0, 65536]", "any text", ...
  std::string description;              // one line: what it sets
  std::vector<std::string> algorithms;  // the algorithms that declare it, in listing order
};

// Every option the registered algorithms declare, once each, in the algorithms' listing order.
std::vector<AlgorithmOptionDescription> describe_algorithm_options();

// The value of the option `variable` under `tuning`: the one set in tuning.algorithm_options,
// else its declared default. Throws InvalidArgument for a variable no algorithm declares and for
// a value the option does not accept, naming the variable as reading it from the environment
// would ("COLL_PS_SERVERS='x' is not an integer in [0, 65536]").
std::string algorithm_option(const Tuning& tuning, std::string_view variable);
// The same for an integer option (a flag is 0 or 1).
long long algorithm_option_number(const Tuning& tuning, std::string_view variable);

// Checks every value of tuning.algorithm_options as above (the communicator does, with the
// Config a tool gives it).
void check_algorithm_options(const Tuning& tuning);

// What COLL_HIER_INTER=auto chooses among: the inter-node algorithm whose composition (the whole
// hierarchical all-reduce with it) the cost model prices fastest for the call.
inline constexpr std::array<std::string_view, 2> kHierInterCandidates{"ring", "halving_doubling"};

// The algorithm's bus factor on `ranks` ranks under `tuning`; nccl-tests' 2(n-1)/n for names
// the registry does not know.
BusFactor bus_factor(std::string_view algorithm, int ranks, const Tuning& tuning);

}  // namespace coll
