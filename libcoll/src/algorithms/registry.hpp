// The all-reduce algorithms libcoll offers, by name. Each algorithm's file registers itself with
// a static AlgorithmRegistration holding everything known about it: how to run it, its cost
// formula, its bus-bandwidth factor and the options (COLL_* variables) it reads. Adding an
// algorithm touches no shared file, and `auto` (Selector) considers every registered algorithm that
// has a cost formula.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "algorithms/collective.hpp"
#include "coll/algorithms.hpp"
#include "coll/model/link_params.hpp"
#include "coll/model/prediction.hpp"
#include "coll/model/shape.hpp"

namespace coll {

using AllreduceFn = void (*)(const CollectiveContext&, const AllreduceArgs&);

// Predicted time of an all-reduce of `bytes` bytes per rank on `shape`, in the cost model's
// terms (alpha, beta per link class, gamma), under the communicator's tuning (segment size,
// parameter-server servers, hierarchical levels). nullopt when the tuning leaves the algorithm
// without a formula (a level algorithm that has none).
using CostFn = std::optional<model::Prediction> (*)(const model::CostParams& params,
                                                    const model::Shape& shape, double bytes,
                                                    const Tuning& tuning);

using BusFactorFn = BusFactor (*)(int ranks, const Tuning& tuning);

// nccl-tests' all-reduce bus factor, 2(n-1)/n: the default of every algorithm.
BusFactor nccl_tests_bus_factor(int ranks, const Tuning& tuning);

// An option of an algorithm: a COLL_* variable only it (and algorithms composed with it) reads,
// declared with its registration. Its value travels as text in Tuning::algorithm_options.
struct AlgorithmOption {
  std::string_view variable;       // COLL_PS_SERVERS
  std::string_view default_value;  // as text, what an unset option reads as
  std::string_view description;    // one line, for describe_algorithm_options
  // An integer in [min, max] (a flag: [0, 1]); otherwise any text, which the algorithm checks
  // where it uses it (a level algorithm's name, say).
  bool integer = false;
  long long min = 0;
  long long max = 0;
};

struct AlgorithmInfo {
  std::string_view name;
  AllreduceFn run;
  std::string_view summary;
  int order;  // listing position (ring, the reference, first)
  // Null only for baselines outside libcoll's model (native MPI, NCCL): `auto` never picks them.
  CostFn cost = nullptr;
  BusFactorFn bus_factor = nccl_tests_bus_factor;
  // Null when always usable; otherwise says whether this process can run it (an MPI job, a GPU).
  bool (*available)() = nullptr;
  // Whether it accepts buffers in device memory (AllreduceArgs' memory types); host-only
  // algorithms are refused device buffers with a clear error instead of crashing on them.
  bool device_memory = false;
  // Whether it carries the argument check in its first message (CollectiveContext::call_check)
  // instead of the separate round before it, which the cost model then does not add.
  bool carries_call_check = false;
  // Whether, carrying it, it hands every rank's call descriptor to every other itself
  // (CallCheck::compare) without a message: the check then receives only a message that comes.
  bool compares_calls = false;
  // Whether its run asks the cost model to choose a level's algorithm per size (hierarchical's
  // COLL_HIER_INTER=auto): the communicator then passes its cost model (CollectiveContext).
  bool asks_cost_model = false;
  // The options it reads (several algorithms may declare the same one: hierarchical's variants).
  std::span<const AlgorithmOption> options = {};
};

// Adds the argument check's own round before the collective (the selector does for every
// algorithm that does not carry the check; one that carries it only on some paths, for those).
void add_check_round(const model::CostParams& params, const model::Shape& shape,
                     const Tuning& tuning, model::Prediction& prediction);

// The cost of an algorithm that runs `fallback` where it cannot run itself (`why`: "across
// nodes"), under its own name.
std::optional<model::Prediction> priced_as(std::string_view fallback, std::string_view name,
                                           std::string_view why, const model::CostParams& params,
                                           const model::Shape& shape, double bytes,
                                           const Tuning& tuning);

// Sorted by `order`, including ones not available in this process. Complete once static
// initialization of libcoll is done.
std::span<const AlgorithmInfo> allreduce_algorithms();
bool is_available(const AlgorithmInfo& info);
const AlgorithmInfo* find_algorithm(std::string_view name);  // nullptr when unknown

// Throws InvalidArgument "device memory is not supported by algorithm 'ring' yet ..." when a
// buffer of `args` is in device memory and the algorithm does not accept it.
void check_memory_supported(const AlgorithmInfo& info, const AllreduceArgs& args);

// The declaration of the option `variable` (nullptr: no registered algorithm declares it).
const AlgorithmOption* find_algorithm_option(std::string_view variable);
// `text` as a value of `option`, checked: an integer option's in canonical form; throws
// InvalidArgument naming the variable as env_integer does.
std::string checked_option_value(const AlgorithmOption& option, const std::string& text);
// Sets in `options` every declared option whose variable the environment holds, checked.
void read_algorithm_options_from_environment(AlgorithmOptions& options);

struct AlgorithmRegistration {
  explicit AlgorithmRegistration(const AlgorithmInfo& info);
};

}  // namespace coll
