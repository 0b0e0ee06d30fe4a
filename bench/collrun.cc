// collrun: runs any program as the ranks of a local job (the launcher collbench uses), with the
// environment contract set for each rank, like a minimal mpirun for libcoll programs.
//   collrun [--nodes N] [--ranks-per-node G | --node-sizes A,B,...] [--] program [args...]
//   collrun --version
#include <cstdio>
#include <cstdlib>
#include <string>

#include "coll/error.hpp"
#include "coll/tools/launcher.hpp"
#include "coll/tools/version_line.hpp"

namespace {

int usage(const char* message) {
  std::fprintf(
      stderr,
      "collrun: error: %s (usage: collrun [--nodes N] [--ranks-per-node G | --node-sizes A,B] "
      "[--] program [args...])\n",
      message);
  return 2;
}

bool parse_count(const char* text, int* value) {
  char* end = nullptr;
  const long parsed = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || parsed < 1 || parsed > 4096) return false;
  *value = static_cast<int>(parsed);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  coll::tools::LaunchSpec spec;
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
    if (arg == "--nodes" || arg == "--ranks-per-node") {
      if (i + 1 >= argc) return usage((arg + " needs a value").c_str());
      int* target = arg == "--nodes" ? &spec.nodes : &spec.ranks_per_node;
      if (!parse_count(argv[++i], target)) return usage((arg + " needs a positive count").c_str());
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
    if (arg.rfind("--", 0) == 0) return usage(("unknown option " + arg).c_str());
    break;
  }
  if (i >= argc) return usage("no program given");
  spec.program = argv[i];
  spec.args.assign(argv + i + 1, argv + argc);
  try {
    return coll::tools::launch_local(spec);
  } catch (const coll::Error& error) {
    std::fprintf(stderr, "collrun: %s\n", error.what());
    return 1;
  }
}
