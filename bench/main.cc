// collbench: launches the ranks (or, as a rank, runs the benchmark it was asked for).

#include <cstdio>
#include <cstdlib>

#include "calibrate.hpp"
#include "coll/comm.hpp"
#include "coll/tools/launcher.hpp"
#include "coll/tools/version_line.hpp"
#include "emulator/emulator.hpp"
#include "explain.hpp"
#include "iteration_replay.hpp"
#include "model_only.hpp"
#include "model_replay.hpp"
#include "options.hpp"
#include "paper_tables_mode.hpp"
#include "soak.hpp"
#include "study/strategy.hpp"
#include "sweep.hpp"
#include "tune.hpp"

namespace {

// A rank runs the mode it was launched for, handed only the parts of the command it reads.
int run_rank(const collbench::Command& command) {
  // --emulate's cells, and anyone, may run collbench's ranks over COLL_TRANSPORT=shaped:...
  coll::emulator::enable();
  auto comm = coll::Comm::from_environment(collbench::library_config(command.library));
  const collbench::SweepOptions& sweep = command.sweep;
  const collbench::ReplayOptions& replay = command.replay;
  if (command.calibrate) return collbench::run_calibration(*comm);
  if (command.soak.ops > 0) return collbench::run_soak(*comm, command.soak, sweep) == 0 ? 0 : 1;
  if (command.tune) return collbench::run_tune(*comm, sweep);
  if (command.explain && replay.model.empty()) collbench::print_explanation(*comm, sweep);
  const std::size_t wrong = replay.model.empty() ? collbench::run_sweep(*comm, sweep)
                            : replay.iteration_replay
                                ? collbench::run_iteration_replay(*comm, replay, sweep)
                                : collbench::run_model_replay(*comm, replay, sweep);
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  collbench::Command command;
  try {
    command = collbench::parse_options(argc, argv);
  } catch (const collbench::UsageError& error) {
    std::fprintf(stderr, "collbench: error: %s (see --help)\n", error.what());
    return 2;
  }
  if (command.help) {
    std::printf("%s", command.help_text.c_str());
    return 0;
  }
  if (command.version) {
    std::printf("%s\n", coll::tools::version_line("collbench").c_str());
    return 0;
  }
  try {
    if (command.strategy_list) {
      std::printf("%s", coll::study::strategy_list().c_str());
      return 0;
    }
    if (command.paper_tables) return collbench::run_paper_tables(command);
    if (command.scaling) return collbench::run_scaling(command);
    if (command.model_only) return collbench::run_model_only(command);
    if (coll::tools::is_rank_process()) return run_rank(command);
    coll::tools::LaunchSpec spec;
    spec.program = coll::tools::own_executable();
    spec.args.assign(argv + 1, argv + argc);
    spec.nodes = command.job.nodes;
    spec.ranks_per_node = command.job.ranks_per_node;
    spec.node_sizes = command.job.node_sizes;
    return coll::tools::launch_local(spec);
  } catch (const coll::Error& error) {
    std::fprintf(stderr, "collbench: %s\n", error.what());
    return 1;
  }
}
