#include "emulation.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "coll/error.hpp"
#include "coll/model/preset.hpp"
#include "coll/tools/launcher.hpp"
#include "paper_tables_mode.hpp"
#include "study/compute_profile.hpp"
#include "study/exposed_conditioning.hpp"
#include "study/model_table.hpp"
#include "study/strategy.hpp"

namespace collbench {

using coll::study::cell_json;
using coll::study::closing_heading;
using coll::study::closing_json;
using coll::study::closing_line;
using coll::study::ClosingFigures;
using coll::study::exposed_swing;
using coll::study::find_strategy;
using coll::study::ill_conditioned_warning;
using coll::study::load_model_table;
using coll::study::modelled_cell;
using coll::study::ms;
using coll::study::paper_models;
using coll::study::paper_shapes;
using coll::study::PaperShape;
using coll::study::percent;
using coll::study::signed_percent;
using coll::study::strategies;
using coll::study::Strategy;
using coll::study::table_params;
using coll::study::table_preset;
using coll::study::TableCell;
using coll::study::TableInputs;
using coll::study::tables_header;

namespace {

namespace fs = std::filesystem;

// Below this much of the cores' time, copying and reducing keep up with the shaped links.
constexpr double kMaxCpuLoad = 0.5;
// The share of K x comm that ranks may spend waking up (waiting for a core) for the messages
// on the critical path.
constexpr double kMaxWakeShare = 0.15;
// How long each other runnable thread per core delays a woken rank: measured here, 2 ranks at
// load 20 on 2 cores waited ~5 ms per ring step (docs/emulation.md).
constexpr double kTurnPerRunnableS = 0.5e-3;
// The deviation from the model the tables are held to where the tool does not warn.
constexpr double kMaxDeviation = 0.15;

// Each step of an all-reduce ends when its receiver wakes and gets a core: the measured wake-up
// delay, or, with more runnable threads than cores, a share of every other one's turn.
double wake_delay_s(int ranks, const MachineLimits& machine) {
  const double per_core = (ranks + machine.others_load) / machine.cores;
  return std::max(machine.wake_s, kTurnPerRunnableS * std::max(0.0, per_core - 1));
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

// Runs `args` (collbench itself as a launcher) with `environment` (NAME=value entries) and its
// output in `log`; returns the status.
int run_quietly(const std::vector<std::string>& args, std::vector<std::string> environment,
                const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const int failed = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (failed != 0) return 127;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last = "no output";
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// The replay's compute profile at this cell's batch, slowed by K.
double child_compute_scale(const Command& command, const TableCell& cell, double time_scale) {
  double scale = command.replay.compute_scale * time_scale;
  if (command.replay.compute_profile == "p40") {
    scale *= double(cell.batch_per_gpu) / coll::study::p40_batch_size(cell.model);
  }
  return scale;
}

// One cell: collbench replays the strategy's iteration on nodes x ranks_per_node ranks over
// shaped links; its JSON gives the measurement.
EmulatedCell emulate_cell(const Command& command, const Strategy& strategy, TableCell model,
                          const std::vector<std::string>& environment, const fs::path& dir) {
  EmulatedCell out;
  out.model = std::move(model);
  const TableCell& cell = out.model;
  const double k = command.study.time_scale;
  const std::string name = cell.model + "_" + cell.strategy + "_" + std::to_string(cell.nodes) +
                           "x" + std::to_string(cell.ranks_per_node);
  const fs::path json = dir / (name + ".json"), log = dir / (name + ".log");
  std::vector<std::string> args{coll::tools::own_executable(),
                                "--model-gradients",
                                cell.model,
                                "--strategy",
                                strategy.name,
                                "--nodes",
                                std::to_string(cell.nodes),
                                "--ranks-per-node",
                                std::to_string(cell.ranks_per_node),
                                "--compute-profile",
                                command.replay.compute_profile,
                                "--compute-scale",
                                number(child_compute_scale(command, cell, k)),
                                "--iters",
                                std::to_string(command.sweep.iterations),
                                "--warmup_iters",
                                std::to_string(command.sweep.warmup),
                                "--models-dir",
                                command.replay.models_dir,
                                "--json",
                                json.string()};
  if (strategy.variant_for(cell.model).empty()) {  // `best`: the table it is compared on
    args.insert(args.end(), {"--model-variant", cell.variant});
  }
  // One selected cell (parse_options checks): its ranks' timeline, in the cluster's time.
  if (!command.replay.trace_path.empty())
    args.insert(args.end(), {"--trace", command.replay.trace_path});
  const int status = run_quietly(args, environment, log);
  if (status != 0) {
    out.error = "exit " + std::to_string(status) + ": " + last_line(log);
    return out;
  }
  const auto doc = nlohmann::json::parse(std::ifstream(json));
  out.comm_ms = doc.at("communication_ms").get<double>() / k;
  out.exposed_ms = doc.at("exposed_ms").get<double>() / k;
  out.backward_ms = doc.at("backward_ms").get<double>() / k;
  if (doc.at("wrong").get<std::size_t>() != 0) out.error = "wrong results";
  return out;
}

std::string cell_name(const TableCell& cell) {
  return cell.model + " " + cell.strategy + " " + std::to_string(cell.gpus()) + " GPUs (" +
         std::to_string(cell.nodes) + "x" + std::to_string(cell.ranks_per_node) + ")";
}

struct EmulationRun {
  const Command& command;
  TableInputs inputs;  // the modelled cells' (table_inputs(command))
  MachineLimits machine;
  std::vector<std::string> environment;  // the cells' collbench runs'
  fs::path dir;                          // the cells' JSON and logs
};

// One cell end to end: the model's, the warning (printed), the measurement.
EmulatedCell measure(const EmulationRun& run, const Strategy& strategy, const std::string& model,
                     const std::string& variant, int table, int nodes, int ranks_per_node) {
  TableCell modelled = modelled_cell(run.inputs, strategy, model, variant, nodes, ranks_per_node);
  modelled.table = table;
  const double gradient_bytes =  // fp32, as the tables price them
      4.0 *
      load_model_table(run.command.replay.models_dir, model, modelled.variant).total_elements();
  double load = 0;
  // On the virtual clock this machine's cores and load do not enter the emulated times; its
  // first-come links do.
  std::string warning = run.command.study.virtual_clock
                            ? first_come_warning(modelled.phase_overlap_ms, modelled)
                            : emulation_warning(modelled, gradient_bytes,
                                                run.command.study.time_scale, run.machine, load);
  if (warning.empty()) {
    warning =
        ill_conditioned_warning(exposed_swing(run.inputs, modelled, [&](const TableInputs& scaled) {
          return modelled_cell(scaled, strategy, modelled.model, modelled.variant, modelled.nodes,
                               modelled.ranks_per_node);
        }));
  }
  std::fprintf(stderr, "collbench: emulating %s\n", cell_name(modelled).c_str());
  if (!warning.empty()) {
    std::fprintf(stderr, "collbench: warning: %s: %s\n", cell_name(modelled).c_str(),
                 warning.c_str());
  }
  EmulatedCell cell = emulate_cell(run.command, strategy, modelled, run.environment, run.dir);
  cell.cpu_load = load;
  cell.warning = warning;
  return cell;
}

double deviation(double emulated, double modelled) {
  return modelled > 0 ? (emulated - modelled) / modelled : 0;
}

// The paper's shapes with more than one GPU, those of --nodes / --ranks-per-node when given;
// both given: that shape, whether the paper has it or not.
std::vector<PaperShape> emulated_shapes(const Command& command) {
  if (command.job.nodes_given && command.job.ranks_per_node_given) {
    return {{command.job.nodes == 1 ? 6 : 7, command.job.nodes, command.job.ranks_per_node}};
  }
  std::vector<PaperShape> shapes;
  for (const auto& shape : paper_shapes()) {
    if (shape.nodes * shape.ranks_per_node < 2) continue;  // one GPU communicates nothing
    if (command.job.nodes_given && shape.nodes != command.job.nodes) continue;
    if (command.job.ranks_per_node_given && shape.ranks_per_node != command.job.ranks_per_node)
      continue;
    shapes.push_back(shape);
  }
  return shapes;
}

// Forward is not replayed: the model's forward, the measured backward and exposed time.
double emulated_iteration_ms(const EmulatedCell& cell) {
  return cell.model.forward_ms + cell.backward_ms + cell.exposed_ms;
}

// The same GPUs and batch as the modelled cell, so throughput, and with it the efficiency,
// scales as 1 / iteration time.
double emulated_efficiency(const EmulatedCell& cell) {
  return cell.model.efficiency * cell.model.iteration_ms / emulated_iteration_ms(cell);
}

std::string markdown(const Command& command, const std::string& links, const MachineLimits& machine,
                     const std::vector<EmulatedCell>& cells) {
  std::ostringstream out;
  out << tables_header(table_inputs(command),
                       "The paper's Tables 6 and 7, emulated on this machine beside the "
                       "cost model")
      << "# emulation: COLL_TRANSPORT=shaped:ucx COLL_CHECK_ARGS=0 COLL_SHAPE=" << links << "; "
      << command.sweep.iterations << " iteration(s) after " << command.sweep.warmup
      << " warm-up, medians; "
      << (command.study.virtual_clock
              ? "times on the virtual clock (messages carry their emulated arrival, compute "
                "advances it, each reduction takes the preset's gamma)"
              : "times divided by K")
      << "; forward is not replayed (iteration = model's forward + measured backward + "
         "exposed)\n"
      << "# deviation = (emulated - model) / model; this machine: " << machine.cores
      << " cores at load " << number(machine.others_load) << ", a thread wakes "
      << ms(machine.wake_s * 1e3) << " ms late from a short sleep"
      << (command.study.virtual_clock ? " (neither enters virtual times)" : "") << "\n\n"
      << "| model | strategy | GPUs | comm model (ms) | comm emulated (ms) | comm deviation | "
         "exposed model (ms) | exposed emulated (ms) | exposed deviation | iteration model / "
         "emulated (ms) | efficiency model / emulated | CPU load | warning |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& cell : cells) {
    const TableCell& m = cell.model;
    out << "| " << m.model << " | " << m.strategy << " | " << m.gpus() << " (" << m.nodes << "x"
        << m.ranks_per_node << ") | " << ms(m.comm_ms) << " | ";
    if (!cell.error.empty()) {
      out << "failed | | " << ms(m.exposed_ms) << " | | | " << ms(m.iteration_ms) << " / - | "
          << percent(m.efficiency) << " / - | | " << cell.error << " |\n";
      continue;
    }
    out << ms(cell.comm_ms) << " | " << signed_percent(deviation(cell.comm_ms, m.comm_ms)) << " | "
        << ms(m.exposed_ms) << " | " << ms(cell.exposed_ms) << " | "
        << signed_percent(deviation(cell.exposed_ms, m.exposed_ms)) << " | " << ms(m.iteration_ms)
        << " / " << ms(emulated_iteration_ms(cell)) << " | " << percent(m.efficiency) << " / "
        << percent(emulated_efficiency(cell)) << " | "
        << (command.study.virtual_clock ? "-" : percent(cell.cpu_load)) << " | "
        << (cell.warning.empty() ? "-" : cell.warning) << " |\n";
  }
  return out.str();
}

// Per model at 16 GPUs: the paper-era strategy with the least emulated exposed communication,
// and `best` emulated on that strategy's table (the table's own `best` row when it has one, else
// a run, added to `cells`).
struct EmulatedClosing {
  std::string model;
  EmulatedCell paper_era, best;
};

std::vector<EmulatedClosing> closing_cells(const EmulationRun& run,
                                           std::vector<EmulatedCell>& cells) {
  std::vector<EmulatedClosing> out;
  for (const auto& model : paper_models()) {
    const EmulatedCell* winner = nullptr;
    for (const auto& cell : cells) {
      const Strategy& strategy = find_strategy(cell.model.strategy);
      if (cell.model.model != model || cell.model.gpus() != 16 || !strategy.paper_era ||
          !cell.error.empty()) {
        continue;
      }
      if (!winner || cell.exposed_ms < winner->exposed_ms) winner = &cell;
    }
    if (!winner) continue;
    EmulatedClosing closing{model, *winner, {}};
    const std::string& variant = closing.paper_era.model.variant;
    const auto row = std::find_if(cells.begin(), cells.end(), [&](const EmulatedCell& cell) {
      return cell.model.model == model && cell.model.strategy == "best" &&
             cell.model.variant == variant && cell.error.empty() && cell.model.nodes == 4 &&
             cell.model.ranks_per_node == 4;
    });
    closing.best =
        row != cells.end() ? *row : measure(run, find_strategy("best"), model, variant, 7, 4, 4);
    if (row == cells.end()) cells.push_back(closing.best);
    out.push_back(std::move(closing));
  }
  return out;
}

ClosingFigures figures_of(const EmulatedClosing& closing) {
  const EmulatedCell& era = closing.paper_era;
  const EmulatedCell& mine = closing.best;
  return {closing.model,
          era.model.strategy,
          era.model.variant,
          {era.exposed_ms, mine.exposed_ms},
          {emulated_iteration_ms(era), emulated_iteration_ms(mine)},
          {emulated_efficiency(era), emulated_efficiency(mine)},
          era.warning.empty() ? mine.warning : era.warning};
}

std::string closing_markdown(const std::vector<EmulatedClosing>& closings) {
  if (closings.empty()) return "";
  std::string out = closing_heading("Emulated at");
  for (const auto& closing : closings) {
    if (!closing.best.error.empty()) {
      out += "- " + closing.model + ": best failed (" + closing.best.error + ")\n";
      continue;
    }
    out += closing_line(figures_of(closing)) + "\n";
  }
  return out;
}

nlohmann::ordered_json emulated_cell_json(const EmulatedCell& cell) {
  return {{"modelled", cell_json(cell.model)},
          {"comm_ms", cell.comm_ms},
          {"exposed_ms", cell.exposed_ms},
          {"backward_ms", cell.backward_ms},
          {"iteration_ms", cell.error.empty() ? emulated_iteration_ms(cell) : 0},
          {"efficiency", cell.error.empty() ? emulated_efficiency(cell) : 0},
          {"comm_deviation", deviation(cell.comm_ms, cell.model.comm_ms)},
          {"exposed_deviation", deviation(cell.exposed_ms, cell.model.exposed_ms)},
          {"cpu_load", cell.cpu_load},
          {"warning", cell.warning},
          {"error", cell.error}};
}

}  // namespace

std::string shape_of(const coll::model::CostParams& params, double time_scale) {
  return "intra=" + number(params.intra.alpha_s) + ":" + number(params.intra.beta_s_per_byte) +
         ",inter=" + number(params.inter.alpha_s) + ":" + number(params.inter.beta_s_per_byte) +
         ",staging=" + number(params.staging_beta_s_per_byte) + ",scale=" + number(time_scale);
}

MachineLimits MachineLimits::measure() {
  MachineLimits limits;
  limits.cores = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  std::ifstream("/proc/loadavg") >> limits.others_load;
  constexpr auto kNap = std::chrono::microseconds(200);
  std::vector<double> late;
  for (int i = 0; i < 21; ++i) {
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(kNap);
    late.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start - kNap).count());
  }
  std::nth_element(late.begin(), late.begin() + 10, late.end());
  limits.wake_s = std::max(0.0, late[10]);
  return limits;
}

namespace {

// What clears a warning: the K at which its measure falls to its limit (it scales as 1 / K), or
// the virtual clock, which this machine's cores and load do not enter.
std::string remedy(double time_scale, double measure, double limit) {
  const double needed = std::ceil(time_scale * measure / limit);
  if (!std::isfinite(needed)) return " (use --clock virtual)";
  return " (raise --time-scale to " + number(needed) + ", or use --clock virtual)";
}

}  // namespace

std::string emulation_warning(const TableCell& cell, double gradient_bytes, double time_scale,
                              const MachineLimits& machine, double& load) {
  const int ranks = cell.gpus();
  const double emulated_comm_s = time_scale * cell.comm_ms * 1e-3;
  // Each rank sends and receives about 2 (n-1)/n of its gradients per iteration (a ring; the
  // other algorithms move no more per rank) and reduces half of that, at this machine's measured
  // costs (preset this-vm), in the cores' share the ranks get beside the machine's other load,
  // while the shaped links give them K x comm to do so.
  const auto costs = coll::model::preset_or_throw("this-vm", "preset");
  const double moved = 2.0 * (ranks - 1) / ranks * gradient_bytes;
  const double work_s = ranks * moved * (costs.intra.beta_s_per_byte + costs.gamma_s_per_byte / 2);
  const double cores = machine.cores * ranks / (ranks + machine.others_load);
  load = emulated_comm_s > 0 ? work_s / (cores * emulated_comm_s) : 0;
  if (load > kMaxCpuLoad) {
    return "CPU-bound: moving and reducing " + std::to_string(ranks) + " ranks' gradients needs " +
           percent(load) + " of the " + number(cores) +
           " cores they get on this machine at K=" + number(time_scale) +
           remedy(time_scale, load, kMaxCpuLoad);
  }
  // Every message an all-reduce passes on in sequence (the model's hops) waits for its receiver
  // to wake.
  const double wake_s = wake_delay_s(ranks, machine);
  const double wake_share = cell.hops * wake_s / emulated_comm_s;
  if (wake_share > kMaxWakeShare) {
    return "latency-bound: ~" + number(std::round(cell.hops)) +
           " steps in sequence, each waiting ~" + ms(wake_s * 1e3) + " ms for its rank to wake (" +
           std::to_string(ranks) + " ranks, load " + number(machine.others_load) + " on " +
           std::to_string(machine.cores) + " cores), against " + ms(emulated_comm_s * 1e3) +
           " ms of emulated communication" + remedy(time_scale, wake_share, kMaxWakeShare);
  }
  // What backward leaves exposed is the all-reduces that run after it, so each of their steps'
  // wake-ups lands in the exposed time: it resolves only exposed times well above them.
  const double emulated_exposed_s = time_scale * cell.exposed_ms * 1e-3;
  const double exposed_wake_share = cell.tail_hops * wake_s / emulated_exposed_s;
  if (exposed_wake_share > kMaxWakeShare) {
    return "exposed time below resolution: the all-reduces left after backward take ~" +
           number(std::round(cell.tail_hops)) + " steps in sequence, each waiting ~" +
           ms(wake_s * 1e3) + " ms for its rank to wake, against " + ms(emulated_exposed_s * 1e3) +
           " ms of emulated exposed communication" +
           remedy(time_scale, exposed_wake_share, kMaxWakeShare);
  }
  return "";
}

std::string first_come_warning(double room_ms, const TableCell& cell) {
  if (room_ms <= kMaxDeviation * cell.comm_ms) return "";
  return "first-come links: on the virtual clock hierarchical's intra-node and inter-node phases "
         "may overlap by up to " +
         ms(room_ms) + " ms of the " + ms(cell.comm_ms) +
         " ms modelled, which fair links do not (use --clock real)";
}

int run_emulated_tables(const Command& command) {
  const auto params = table_params(table_inputs(command));
  const std::string links =
      shape_of(params, command.study.time_scale) +
      (command.study.virtual_clock ? ",clock=virtual,reduce=" + number(params.gamma_s_per_byte)
                                   : "");
  const MachineLimits machine = MachineLimits::measure();
  const fs::path dir =
      fs::temp_directory_path() / ("collbench-emulate-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The cells' ranks run over shaped links, and `best` (auto) chooses for the table's preset;
  // the argument check's extra message round per all-reduce is libcoll's, not the model's.
  const EmulationRun run{
      command, table_inputs(command), machine,
      coll::tools::environment_with({"COLL_TRANSPORT=shaped:ucx", "COLL_SHAPE=" + links,
                                     "COLL_COST_PRESET=" + table_preset(table_inputs(command)),
                                     "COLL_CHECK_ARGS=0"}),
      dir};
  std::vector<EmulatedCell> cells;
  for (const auto& model : paper_models()) {
    if (!command.replay.model.empty() && model != command.replay.model) continue;
    for (const auto& strategy : strategies()) {
      if (!command.replay.strategy.empty() && strategy.name != command.replay.strategy) continue;
      for (const auto& shape : emulated_shapes(command)) {
        cells.push_back(
            measure(run, strategy, model, "", shape.table, shape.nodes, shape.ranks_per_node));
      }
    }
  }
  const bool closing_wanted =
      command.replay.strategy.empty() && (!command.job.nodes_given || command.job.nodes == 4);
  const auto closings = closing_wanted ? closing_cells(run, cells) : std::vector<EmulatedClosing>{};
  fs::remove_all(dir);
  nlohmann::ordered_json doc;
  doc["tool"] = "collbench";
  doc["mode"] = "paper-tables-emulated";
  doc["cost_model"] = params.source;
  doc["shape"] = links;
  doc["time_scale"] = command.study.time_scale;
  doc["clock"] = command.study.virtual_clock ? "virtual" : "real";
  doc["machine"] = {
      {"cores", machine.cores}, {"load", machine.others_load}, {"wake_ms", machine.wake_s * 1e3}};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  int failed = 0;
  for (const auto& cell : cells) {
    failed += !cell.error.empty();
    list.push_back(emulated_cell_json(cell));
  }
  doc["cells"] = list;
  nlohmann::ordered_json closing = nlohmann::ordered_json::array();
  for (const auto& entry : closings) {
    // A failed `best` has no figures to compare: its ratio is null, as for nothing exposed.
    ClosingFigures figures = figures_of(entry);
    if (!entry.best.error.empty()) figures.exposed_ms[1] = 0;
    closing.push_back(
        closing_json(figures, emulated_cell_json(entry.paper_era), emulated_cell_json(entry.best)));
  }
  doc["closing"] = closing;
  const int status =
      print_and_save(markdown(command, links, machine, cells) + closing_markdown(closings),
                     doc.dump(1) + "\n", command.sweep.json_path);
  return failed == 0 ? status : 1;
}

}  // namespace collbench
