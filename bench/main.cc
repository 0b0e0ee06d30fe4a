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

int run_rank(const collbench::Options& options) {
  // --emulate's cells, and anyone, may run collbench's ranks over COLL_TRANSPORT=shaped:...
  coll::emulator::enable();
  auto comm = coll::Comm::from_environment(collbench::library_config(options));
  if (options.calibrate) return collbench::run_calibration(*comm, options);
  if (options.soak_ops > 0) return collbench::run_soak(*comm, options) == 0 ? 0 : 1;
  if (options.tune) return collbench::run_tune(*comm, options);
  if (options.explain && options.model.empty()) collbench::print_explanation(*comm, options);
  const std::size_t wrong = options.model.empty() ? collbench::run_sweep(*comm, options)
                            : options.iteration_replay
                                ? collbench::run_iteration_replay(*comm, options)
                                : collbench::run_model_replay(*comm, options);
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  collbench::Options options;
  try {
    options = collbench::parse_options(argc, argv);
  } catch (const collbench::UsageError& error) {
    std::fprintf(stderr, "collbench: error: %s (see --help)\n", error.what());
    return 2;
  }
  if (options.help) {
    std::printf("%s", options.help_text.c_str());
    return 0;
  }
  if (options.version) {
    std::printf("%s\n", coll::tools::version_line("collbench").c_str());
    return 0;
  }
  try {
    if (options.strategy_list) {
      std::printf("%s", coll::study::strategy_list().c_str());
      return 0;
    }
    if (options.paper_tables) return collbench::run_paper_tables(options);
    if (options.scaling) return collbench::run_scaling(options);
    if (options.model_only) return collbench::run_model_only(options);
    if (coll::tools::is_rank_process()) return run_rank(options);
    coll::tools::LaunchSpec spec;
    spec.program = coll::tools::own_executable();
    spec.args.assign(argv + 1, argv + argc);
    spec.nodes = options.nodes;
    spec.ranks_per_node = options.ranks_per_node;
    spec.node_sizes = options.node_sizes;
    return coll::tools::launch_local(spec);
  } catch (const coll::Error& error) {
    std::fprintf(stderr, "collbench: %s\n", error.what());
    return 1;
  }
}
