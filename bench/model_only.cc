#include "model_only.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "coll/algorithms.hpp"
#include "coll/config.hpp"
#include "coll/error.hpp"
#include "coll/model/resolve_params.hpp"
#include "coll/tools/chrome_trace.hpp"
#include "study/iteration_model.hpp"
#include "study/model_table.hpp"
#include "study/simulation_trace.hpp"
#include "study/strategy.hpp"

namespace collbench {

using coll::study::IterationSetup;
using coll::study::load_model_table;
using coll::study::model_iteration;
using coll::study::modelled_allreduce;
using coll::study::ModelledIteration;
using coll::study::ModelTable;

namespace {

namespace model = coll::model;

model::Shape shape_of(const JobShape& job) {
  if (job.node_sizes.empty()) return model::Shape::uniform(job.nodes, job.ranks_per_node);
  std::vector<int> node_of_rank;
  for (std::size_t node = 0; node < job.node_sizes.size(); ++node) {
    node_of_rank.insert(node_of_rank.end(), static_cast<std::size_t>(job.node_sizes[node]),
                        static_cast<int>(node));
  }
  return model::Shape::from_node_of_rank(node_of_rank);
}

// The cost parameters the ranks would price with: --cost-preset, else COLL_COST_PRESET, else
// the calibration file or this-vm.
model::CostParams params_of(const LibrarySettings& library, const coll::Config& config) {
  return model::resolve_params(config.cost_preset,
                               library.cost_preset.empty() ? "COLL_COST_PRESET" : "--cost-preset");
}

// The servers and levels the library's tuning sets (its algorithms' options, or their defaults).
void place_as_tuned(IterationSetup& setup, const coll::Tuning& tuning) {
  setup.inter = coll::algorithm_option(tuning, "COLL_HIER_INTER");
  setup.intra = coll::algorithm_option(tuning, "COLL_HIER_INTRA");
  setup.ps_servers = static_cast<int>(coll::algorithm_option_number(tuning, "COLL_PS_SERVERS"));
  setup.ps_dedicated = coll::algorithm_option_number(tuning, "COLL_PS_DEDICATED") == 1;
}

// The setup the options describe: a strategy's, or --algo/--fusion/--overlap with the library's
// tuning (COLL_PS_SERVERS, COLL_PS_DEDICATED, COLL_HIER_INTER and the flags for them) as the
// ranks would have it.
IterationSetup setup_of(const Command& command, const ModelTable& table) {
  const coll::Config config = library_config(command.library);
  const coll::Tuning& tuning = config.tuning;
  IterationSetup setup;
  setup.shape = shape_of(command.job);
  setup.params = params_of(command.library, config);
  setup.algorithm =
      command.sweep.algorithms.empty() ? config.algorithm : command.sweep.algorithms.front();
  if (command.sweep.algorithms.size() > 1) {
    throw coll::Error(coll::Status::InvalidArgument,
                      "--model-only replays one algorithm per iteration; --algo lists " +
                          std::to_string(command.sweep.algorithms.size()));
  }
  place_as_tuned(setup, tuning);
  setup.fusion = command.replay.fusion;
  setup.overlap = command.replay.overlap;
  const int batch = coll::study::p40_batch_size(table.model);
  setup.batch_per_gpu =
      command.study.batch_per_node ? std::max(1, batch / setup.shape.max_local()) : batch;
  setup.compute_scale = command.replay.compute_scale;
  setup.compute_profile = command.replay.compute_profile;
  setup.element_bytes = coll::dtype_size(command.sweep.type);
  return setup;
}

void save(const std::string& json_path, const nlohmann::ordered_json& doc) {
  if (json_path.empty()) return;
  std::ofstream out(json_path);
  out << doc.dump(1) << "\n";
  if (!out.flush()) {
    throw coll::Error(coll::Status::SystemError, "cannot write " + json_path);
  }
}

int model_iteration_report(const Command& command) {
  const ModelTable table = load_model_table(command.replay.models_dir, command.replay.model,
                                            command.replay.model_variant);
  const IterationSetup setup = setup_of(command, table);
  const auto start = std::chrono::steady_clock::now();
  const ModelledIteration it = model_iteration(table, setup);
  const double simulated_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::string algorithms;
  for (const auto& [name, count] : it.algorithm_buckets) {
    algorithms += (algorithms.empty() ? "" : ", ") + name + " x" + std::to_string(count);
  }
  std::printf("# collbench --model-only: %s (%s, %s gradients), %s\n", table.model.c_str(),
              table.variant.c_str(), std::string(coll::dtype_name(command.sweep.type)).c_str(),
              setup.shape.describe().c_str());
  std::printf("# cost model: %s\n# compute: %s; batch %d per GPU\n", setup.params.source.c_str(),
              it.profile.source.c_str(), setup.batch_per_gpu);
  std::printf(
      "# %s%s; fusion %s: %zu buckets (%s); overlap %s\n",
      command.replay.strategy.empty() ? "" : ("strategy " + command.replay.strategy + ": ").c_str(),
      ("algorithm " + setup.algorithm +
       (setup.algorithm.starts_with("hierarchical") ? " + " + setup.inter : ""))
          .c_str(),
      it.fusion.c_str(), it.buckets.size(), algorithms.empty() ? "-" : algorithms.c_str(),
      setup.overlap ? "on" : "off");
  std::printf(" %-24s %10.3f ms\n", "forward", it.forward_s * 1e3);
  std::printf(" %-24s %10.3f ms\n", "backward", it.backward_s * 1e3);
  std::printf(" %-24s %10.3f ms\n", "communication (sum)", it.comm_s * 1e3);
  std::printf(" %-24s %10.3f ms\n", "exposed communication", it.exposed_s * 1e3);
  std::printf(" %-24s %10.3f ms\n", "iteration", it.iteration_s * 1e3);
  std::printf(" %-24s %10.1f %%\n", "hidden fraction", it.timeline.hidden_fraction * 100);
  std::printf("# planned and simulated in %.1f ms on this machine\n", simulated_ms);
  nlohmann::ordered_json buckets = nlohmann::ordered_json::array();
  if (command.replay.per_layer)
    std::printf("#%6s %8s %12s %10s %10s %10s\n", "bucket", "tensors", "bytes", "ready", "start",
                "end");
  for (std::size_t b = 0; b < it.buckets.size(); ++b) {
    const auto& timing = it.timeline.buckets[b];
    if (command.replay.per_layer) {
      std::printf(" %6zu %8zu %12zu %10.3f %10.3f %10.3f\n", b,
                  it.buckets[b].last - it.buckets[b].first, it.buckets[b].bytes,
                  timing.ready_s * 1e3, timing.start_s * 1e3, timing.end_s * 1e3);
    }
    buckets.push_back({{"bytes", it.buckets[b].bytes},
                       {"tensors", it.buckets[b].last - it.buckets[b].first},
                       {"ready_ms", timing.ready_s * 1e3},
                       {"start_ms", timing.start_s * 1e3},
                       {"end_ms", timing.end_s * 1e3}});
  }
  save(command.sweep.json_path, {{"tool", "collbench"},
                                 {"mode", "model-only-iteration"},
                                 {"model", table.model},
                                 {"variant", table.variant},
                                 {"strategy", command.replay.strategy},
                                 {"ranks", setup.shape.ranks},
                                 {"nodes", setup.shape.nodes},
                                 {"cost_model", setup.params.source},
                                 {"algorithm", setup.algorithm},
                                 {"fusion", it.fusion},
                                 {"overlap", setup.overlap},
                                 {"batch_per_gpu", setup.batch_per_gpu},
                                 {"forward_ms", it.forward_s * 1e3},
                                 {"backward_ms", it.backward_s * 1e3},
                                 {"comm_ms", it.comm_s * 1e3},
                                 {"exposed_ms", it.exposed_s * 1e3},
                                 {"iteration_ms", it.iteration_s * 1e3},
                                 {"simulated_ms", simulated_ms},
                                 {"buckets", buckets}});
  if (!command.replay.trace_path.empty()) {  // the model's timeline is the same on every rank
    coll::tools::write_chrome_trace(
        command.replay.trace_path,
        coll::study::simulation_events(it.timeline, it.buckets, it.profile, 0));
    std::printf("# modelled timeline written to %s\n", command.replay.trace_path.c_str());
  }
  return 0;
}

// The modelled size sweep reads the job's shape, the library's settings and the sweep's flags.
int model_sweep_report(const JobShape& job, const LibrarySettings& library,
                       const SweepOptions& sweep) {
  const model::Shape shape = shape_of(job);
  const coll::Config config = library_config(library);
  const coll::Tuning& tuning = config.tuning;
  const model::CostParams params = params_of(library, config);
  std::vector<std::string> algorithms = sweep.algorithms;
  if (algorithms.empty()) algorithms.push_back(config.algorithm);
  std::printf("# collbench --model-only size sweep: %s\n# cost model: %s\n",
              shape.describe().c_str(), params.source.c_str());
  const bool placed = std::any_of(algorithms.begin(), algorithms.end(), [](const auto& name) {
    return name == "ps" || name == "auto" || name.starts_with("hierarchical");
  });
  // Where the servers and levels are (every size's setup starts from it), printed for the
  // algorithms that have them.
  IterationSetup placement;
  place_as_tuned(placement, tuning);
  if (placed) {
    std::printf(
        "# placement: ps servers %s%s; hierarchical levels %s inside nodes, %s across\n",
        placement.ps_servers > 0 ? std::to_string(placement.ps_servers).c_str() : "every rank",
        placement.ps_servers == 0 ? ""
        : placement.ps_dedicated  ? " (the last ranks)"
                                  : " (spread over the nodes)",
        placement.intra.c_str(), placement.inter.c_str());
  }
  std::printf("# %12s %-20s %12s %10s %10s  %s\n", "size (B)", "algorithm", "time (us)", "algbw",
              "busbw", "detail");
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const std::size_t elem = coll::dtype_size(sweep.type);
  for (std::size_t bytes = sweep.min_bytes; bytes <= sweep.max_bytes; bytes *= sweep.step_factor) {
    const std::size_t message = bytes / elem * elem;
    for (const auto& name : algorithms) {
      IterationSetup setup = placement;
      setup.shape = shape;
      setup.params = params;
      setup.algorithm = name;
      const auto [seconds, chosen] = modelled_allreduce(setup, message);
      const double algbw = seconds > 0 ? message / seconds / 1e9 : 0;
      // The algorithm that ran decides the column: a parameter server's is wkbw*, as a sweep's.
      const coll::BusFactor bus = coll::bus_factor(chosen, shape.ranks, tuning);
      const double busbw = algbw * bus.factor;
      const std::string detail = (chosen == name ? "" : "chose " + chosen + " ") +
                                 (bus.standard ? "" : "(busbw column: " + bus.definition + ")");
      std::printf("  %12zu %-20s %12.2f %10.3f %10.3f  %s\n", message, name.c_str(), seconds * 1e6,
                  algbw, busbw, detail.c_str());
      rows.push_back({{"bytes", message},
                      {"algorithm", name},
                      {"chosen", chosen},
                      {"time_us", seconds * 1e6},
                      {"algbw_gbps", algbw},
                      {"busbw_gbps", busbw},
                      {"busbw_standard", bus.standard}});
    }
    if (bytes == 0) break;
  }
  save(sweep.json_path, {{"tool", "collbench"},
                         {"mode", "model-only-sweep"},
                         {"ranks", shape.ranks},
                         {"nodes", shape.nodes},
                         {"cost_model", params.source},
                         {"results", rows}});
  return 0;
}

}  // namespace

int run_model_only(const Command& command) {
  return command.replay.model.empty()
             ? model_sweep_report(command.job, command.library, command.sweep)
             : model_iteration_report(command);
}

}  // namespace collbench
