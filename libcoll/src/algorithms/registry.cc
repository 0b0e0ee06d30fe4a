#include "algorithms/registry.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "coll/error.hpp"

namespace coll {
namespace {

std::vector<AlgorithmInfo>& registered() {
  static std::vector<AlgorithmInfo> algorithms;  // constructed on first registration
  return algorithms;
}

}  // namespace

AlgorithmRegistration::AlgorithmRegistration(const AlgorithmInfo& info) {
  auto& algorithms = registered();
  algorithms.push_back(info);
  std::stable_sort(
      algorithms.begin(), algorithms.end(),
      [](const AlgorithmInfo& a, const AlgorithmInfo& b) { return a.order < b.order; });
}

std::span<const AlgorithmInfo> allreduce_algorithms() {
  return registered();
}

BusFactor nccl_tests_bus_factor(int ranks, const Tuning& /*tuning*/) {
  return {ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0, true,
          "busbw = algbw * 2(n-1)/n (nccl-tests)"};
}

std::optional<model::Prediction> priced_as(std::string_view fallback, std::string_view name,
                                           std::string_view why, const model::CostParams& params,
                                           const model::Shape& shape, double bytes,
                                           const Tuning& tuning) {
  const AlgorithmInfo& runs = *find_algorithm(fallback);
  auto prediction = runs.cost(params, shape, bytes, tuning);
  if (prediction) {
    // The selector prices the check by the name's algorithm: one that carries it where the
    // fallback does not has the fallback wait for the check's round.
    if (find_algorithm(name)->carries_call_check && !runs.carries_call_check) {
      add_check_round(params, shape, tuning, *prediction);
    }
    prediction->algorithm = std::string(name);
    prediction->detail =
        "runs " + std::string(fallback) + " " + std::string(why) + ": " + prediction->detail;
  }
  return prediction;
}

// With COLL_CHECK_ARGS on, an algorithm that does not carry the argument check in its first
// message waits for a round of descriptors around the ring before it starts: one alpha of the
// ring's slowest link, which crosses nodes when there are several.
void add_check_round(const model::CostParams& params, const model::Shape& shape,
                     const Tuning& tuning, model::Prediction& prediction) {
  if (!tuning.check_arguments || shape.ranks < 2) return;
  prediction.latency_s +=
      std::max(params.intra.alpha_s, shape.nodes > 1 ? params.inter.alpha_s : 0.0);
  prediction.detail += prediction.detail.empty() ? "" : "; ";
  prediction.detail += "+1 step: the argument check";
}

bool is_available(const AlgorithmInfo& info) {
  return info.available == nullptr || info.available();
}

const AlgorithmInfo* find_algorithm(std::string_view name) {
  for (const auto& info : registered()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

namespace {

AlgorithmDescription describe(const AlgorithmInfo& info) {
  return {std::string(info.name), std::string(info.summary), is_available(info),
          info.cost != nullptr, info.device_memory};
}

}  // namespace

std::vector<AlgorithmDescription> describe_algorithms() {
  std::vector<AlgorithmDescription> descriptions;
  for (const auto& info : registered()) descriptions.push_back(describe(info));
  return descriptions;
}

std::optional<AlgorithmDescription> describe_algorithm(std::string_view name) {
  const AlgorithmInfo* info = find_algorithm(name);
  if (info == nullptr) return std::nullopt;
  return describe(*info);
}

BusFactor bus_factor(std::string_view algorithm, int ranks, const Tuning& tuning) {
  const AlgorithmInfo* info = find_algorithm(algorithm);
  return info != nullptr ? info->bus_factor(ranks, tuning) : nccl_tests_bus_factor(ranks, tuning);
}

void check_memory_supported(const AlgorithmInfo& info, const AllreduceArgs& args) {
  if (info.device_memory) return;
  if (args.send_memory == MemoryType::Device || args.recv_memory == MemoryType::Device) {
    throw Error(Status::InvalidArgument,
                "device memory is not supported by algorithm '" + std::string(info.name) +
                    "' yet: pass host buffers (send buffer in " +
                    std::string(memory_type_name(args.send_memory)) +
                    " memory, receive buffer in " +
                    std::string(memory_type_name(args.recv_memory)) + " memory)");
  }
}

}  // namespace coll
