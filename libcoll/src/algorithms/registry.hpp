// The all-reduce algorithms libcoll offers, by name.
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
};

std::span<const AlgorithmInfo> allreduce_algorithms();
const AlgorithmInfo* find_algorithm(std::string_view name);  // nullptr when unknown

// The algorithms themselves, one file each.
void ring_allreduce(const CollectiveContext& context, const AllreduceArgs& args);

}  // namespace coll
