#include "algorithms/registry.hpp"

namespace coll {
namespace {

constexpr AlgorithmInfo kAlgorithms[] = {
    {"ring", ring_allreduce,
     "reduce-scatter then all-gather around a ring; bandwidth-optimal, 2(n-1) latency steps"},
};

}  // namespace

std::span<const AlgorithmInfo> allreduce_algorithms() {
  return kAlgorithms;
}

const AlgorithmInfo* find_algorithm(std::string_view name) {
  for (const auto& info : kAlgorithms) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace coll
