// collbench: launches the ranks (or, as a rank, runs the benchmark it was asked for).
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "bootstrap/launcher.hpp"
#include "calibrate.hpp"
#include "coll/comm.hpp"
#include "explain.hpp"
#include "model_replay.hpp"
#include "options.hpp"
#include "sweep.hpp"

namespace {

bool is_rank_process() {
  return std::getenv("COLL_RANK") != nullptr || std::getenv("OMPI_COMM_WORLD_RANK") != nullptr;
}

std::string own_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string();
}

int run_rank(const collbench::Options& options) {
  auto comm = coll::Comm::from_environment();
  if (options.calibrate) return collbench::run_calibration(*comm, options);
  if (options.explain && options.model.empty()) collbench::print_explanation(*comm, options);
  const std::size_t wrong = options.model.empty() ? collbench::run_sweep(*comm, options)
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
  // The library reads the preset (for --algo auto too); the ranks inherit it.
  if (!options.cost_preset.empty()) ::setenv("COLL_COST_PRESET", options.cost_preset.c_str(), 1);
  try {
    if (is_rank_process()) return run_rank(options);
    coll::LaunchSpec spec;
    spec.program = own_executable();
    spec.args.assign(argv + 1, argv + argc);
    spec.nodes = options.nodes;
    spec.ranks_per_node = options.ranks_per_node;
    spec.node_sizes = options.node_sizes;
    return coll::launch_local(spec);
  } catch (const coll::Error& error) {
    std::fprintf(stderr, "collbench: %s\n", error.what());
    return 1;
  }
}
