// Presets. Every number states where it comes from.
//
// "p40-cluster": the paper's testbed (Shi et al., arXiv 1711.05979): 4 nodes
// x 4 Tesla P40 on PCIe 3.0 x16, nodes joined by 56 Gb/s FDR InfiniBand, one HCA per node.
//  - intra: PCIe 3.0 x16 is 15.75 GB/s raw per direction; GPU-to-GPU copies through the switch
//    and root complex reach about 10 GB/s (assumed ~65 % of raw). The group's own fit for 2
//    workers in one node, T = 2.55 us + 9.84e-11 s/B * M, is a 2-rank ring (2 steps, M bytes
//    each way): beta = 9.84e-11 s/B (10.2 GB/s), alpha = 2.55 / 2 = 1.3 us per step.
//  - inter: FDR 4x signals 56 Gb/s, 54.5 Gb/s of data after 64b/66b coding (6.8 GB/s); about
//    6.0 GB/s effective (beta = 1.67e-10 s/B). alpha = 5 us per hop: ~1-2 us of verbs/MPI
//    latency plus the per-step software cost NCCL's model gives a network hop (2.7-14 us,
//    NCCL's src/graph/tuning.cc). Check against the group's fits: the ring formula with these
//    numbers gives 20.2 ms for 64 MiB on 8 workers (fit: 20.6 ms) and 21.7 ms on 16 workers (fit:
//    27.5 ms, whose alpha of 236 us also holds kernel launches); see cost_model_test.
//  - gamma: P40 memory bandwidth 346 GB/s; a += b moves 3 bytes per output byte: 115 GB/s of
//    output, gamma = 8.7e-12 s/B.
//
// "this-vm": the 2-vCPU build VM (measured there with collbench and colltopo): UCX shared memory
// about 14 GB/s and 0.5 us (intra), TCP over lo 2.9-4.5 GB/s and 7.7 us (inter: emulated nodes talk
// TCP), gamma from c = a + b at 9-11 GB/s of output on one thread (1e-10 s/B).
#include "model/preset.hpp"

#include "coll/error.hpp"

namespace coll::model {
namespace {

struct Preset {
  const char* name;
  CostParams params;
};

const std::vector<Preset>& presets() {
  static const std::vector<Preset> table{
      {"this-vm", {{0.5e-6, 1 / 14e9}, {7.7e-6, 1 / 3.5e9}, 1 / 10e9, "preset this-vm"}},
      {"p40-cluster", {{1.3e-6, 9.84e-11}, {5.0e-6, 1 / 6.0e9}, 3 / 346e9, "preset p40-cluster"}},
  };
  return table;
}

}  // namespace

std::optional<CostParams> find_preset(std::string_view name) {
  for (const auto& preset : presets()) {
    if (name == preset.name) return preset.params;
  }
  return std::nullopt;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& preset : presets()) out.emplace_back(preset.name);
    return out;
  }();
  return names;
}

CostParams preset_or_throw(std::string_view name, std::string_view what) {
  if (auto params = find_preset(name)) return *params;
  std::string known;
  for (const auto& preset : preset_names()) known += (known.empty() ? "" : ", ") + preset;
  throw Error(Status::InvalidArgument, std::string(what) + ": unknown cost preset '" +
                                           std::string(name) + "' (known: " + known + ")");
}

}  // namespace coll::model
