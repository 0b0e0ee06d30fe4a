#include "algorithms/registry.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "coll/env.hpp"
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

const AlgorithmOption* find_algorithm_option(std::string_view variable) {
  for (const auto& info : registered()) {
    for (const auto& option : info.options) {
      if (option.variable == variable) return &option;
    }
  }
  return nullptr;
}

std::string checked_option_value(const AlgorithmOption& option, const std::string& text) {
  if (!option.integer) return text;
  return std::to_string(parse_integer_setting(option.variable, text, option.min, option.max));
}

void read_algorithm_options_from_environment(AlgorithmOptions& options) {
  for (const auto& info : registered()) {
    for (const auto& option : info.options) {
      const std::string variable(option.variable);
      if (auto text = env_string(variable.c_str())) {
        options.set(variable, checked_option_value(option, *text));
      }
    }
  }
}

namespace {

const AlgorithmOption& declared_option(std::string_view variable) {
  const AlgorithmOption* option = find_algorithm_option(variable);
  if (option == nullptr) {
    std::string declared;
    for (const auto& described : describe_algorithm_options()) {
      declared += (declared.empty() ? "" : ", ") + described.variable;
    }
    throw Error(Status::InvalidArgument, "no algorithm has the option '" + std::string(variable) +
                                             "' (the algorithms' options: " + declared + ")");
  }
  return *option;
}

}  // namespace

std::vector<AlgorithmOptionDescription> describe_algorithm_options() {
  std::vector<AlgorithmOptionDescription> options;
  for (const auto& info : registered()) {
    for (const auto& option : info.options) {
      auto same = std::find_if(options.begin(), options.end(), [&](const auto& known) {
        return known.variable == option.variable;
      });
      if (same == options.end()) {
        same = options.insert(
            options.end(), {std::string(option.variable),
                            std::string(option.default_value),
                            option.integer ? "an integer in [" + std::to_string(option.min) + ", " +
                                                 std::to_string(option.max) + "]"
                                           : "any text",
                            std::string(option.description),
                            {}});
      }
      same->algorithms.emplace_back(info.name);
    }
  }
  return options;
}

std::string algorithm_option(const Tuning& tuning, std::string_view variable) {
  const AlgorithmOption& option = declared_option(variable);
  const std::string* value = tuning.algorithm_options.find(variable);
  return value != nullptr ? checked_option_value(option, *value)
                          : std::string(option.default_value);
}

long long algorithm_option_number(const Tuning& tuning, std::string_view variable) {
  const AlgorithmOption& option = declared_option(variable);
  if (!option.integer) {
    throw Error(Status::InvalidArgument,
                "the option '" + std::string(variable) + "' is text, not a number");
  }
  // Parsed once: the parameter server and hierarchical read their options on every call.
  const std::string* value = tuning.algorithm_options.find(variable);
  return parse_integer_setting(option.variable,
                               value != nullptr ? *value : std::string(option.default_value),
                               option.min, option.max);
}

void check_algorithm_options(const Tuning& tuning) {
  for (const auto& [variable, value] : tuning.algorithm_options.values()) {
    checked_option_value(declared_option(variable), value);
  }
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
