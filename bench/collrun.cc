// collrun: runs any program as the ranks of a local job (the launcher collbench uses), with the
// environment contract set for each rank, like a minimal mpirun for libcoll programs.
//   collrun [-np N] [--nodes N] [--ranks-per-node G | --node-sizes A,B,...] [--] program [args...]
//   collrun --version | --help
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "coll/error.hpp"
#include "coll/tools/launcher.hpp"
#include "coll/tools/version_line.hpp"
#include "program_lookup.hpp"

namespace {

constexpr const char* kUsage =
    "usage: collrun [-np N] [--nodes N] [--ranks-per-node G | --node-sizes A,B,...] [--] "
    "program [args...]";

constexpr const char* kHelp =
    "Runs PROGRAM as the ranks of a job on this machine, each with COLL_RANK, COLL_SIZE,\n"
    "COLL_STORE, COLL_TOKEN, COLL_NODE and COLL_LOCAL_RANK set; output is prefixed [rank r].\n"
    "PROGRAM is looked up in PATH unless it contains a slash. The job fails, and collrun exits\n"
    "with that status, as soon as one rank fails.\n"
    "\n"
    "  -np N, -n N             N ranks in all (split evenly over --nodes)\n"
    "  --nodes N               emulated nodes (default 1; COLL_NODE differs per node)\n"
    "  --ranks-per-node G      ranks on each node (default 1)\n"
    "  --node-sizes A,B,...    uneven nodes: ranks on each node\n"
    "  -h, --help              this help\n"
    "\n"
    "COLL_LAUNCH_GRACE: seconds the other ranks get to report a failure before being killed.\n"
    "COLL_BIND: core (default) pins rank r to the r-th CPU collrun may use, round robin;\n"
    "none leaves the ranks to the scheduler.\n";

int usage(const std::string& message) {
  std::fprintf(stderr, "collrun: error: %s (%s)\n", message.c_str(), kUsage);
  return 2;
}

bool parse_count(const char* text, int* value) {
  char* end = nullptr;
  const long parsed = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || parsed < 1 || parsed > 4096) return false;
  *value = static_cast<int>(parsed);
  return true;
}

int usable_cores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  coll::tools::LaunchSpec spec;
  std::optional<int> total_ranks;
  bool ranks_per_node_given = false;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--version") {
      std::printf("%s\n", coll::tools::version_line("collrun").c_str());
      return 0;
    }
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      std::printf("%s\n\n%s", kUsage, kHelp);
      return 0;
    }
    if (arg == "--nodes" || arg == "--ranks-per-node" || arg == "-np" || arg == "-n") {
      if (i + 1 >= argc) return usage(arg + " needs a value");
      int value = 0;
      if (!parse_count(argv[++i], &value)) return usage(arg + " needs a positive count");
      if (arg == "--nodes") spec.nodes = value;
      if (arg == "--ranks-per-node") spec.ranks_per_node = value;
      if (arg == "-np" || arg == "-n") total_ranks = value;
      ranks_per_node_given |= arg == "--ranks-per-node";
      continue;
    }
    if (arg == "--node-sizes") {
      if (i + 1 >= argc) return usage("--node-sizes needs a list such as 3,2");
      try {
        spec.node_sizes = coll::tools::parse_node_sizes(argv[++i]);
      } catch (const coll::Error& error) {
        return usage(error.what());
      }
      continue;
    }
    if (arg.rfind("-", 0) == 0) return usage("unknown option " + arg);
    break;
  }
  if (total_ranks) {
    if (!spec.node_sizes.empty()) return usage("give -np or --node-sizes, not both");
    if (*total_ranks % spec.nodes != 0 ||
        (ranks_per_node_given && spec.ranks_per_node * spec.nodes != *total_ranks)) {
      return usage("-np " + std::to_string(*total_ranks) + " does not match --nodes " +
                   std::to_string(spec.nodes) +
                   (ranks_per_node_given
                        ? " x --ranks-per-node " + std::to_string(spec.ranks_per_node)
                        : std::string(" (ranks must split evenly over nodes)")));
    }
    spec.ranks_per_node = *total_ranks / spec.nodes;
  }
  if (i >= argc) return usage("no program given");
  try {
    spec.program = collbench::find_program(argv[i]);
  } catch (const coll::Error& error) {
    std::fprintf(stderr, "collrun: error: %s\n", error.what());
    return 127;  // as a shell says for a command it cannot run
  }
  spec.args.assign(argv + i + 1, argv + argc);
  int ranks = 0;
  if (spec.node_sizes.empty()) {
    ranks = spec.nodes * spec.ranks_per_node;
  } else {
    for (const int size : spec.node_sizes) ranks += size;
  }
  if (const int cores = usable_cores(); ranks > cores) {
    std::fprintf(stderr,
                 "collrun: warning: %d ranks on %d core(s): ranks share cores, so timings are "
                 "slower than with a core each\n",
                 ranks, cores);
  }
  try {
    return coll::tools::launch_local(spec);
  } catch (const coll::Error& error) {
    std::fprintf(stderr, "collrun: %s\n", error.what());
    return 1;
  }
}
