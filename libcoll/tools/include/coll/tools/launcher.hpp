// The local launcher: runs nodes × ranks_per_node rank processes of one program on this machine,
// hosts their store, forwards their output, and turns any rank's failure into the job's failure
// without leaving a single process behind.
#pragma once

#include <string>
#include <vector>

namespace coll::tools {

struct LaunchSpec {
  std::string program;            // executable each rank runs
  std::vector<std::string> args;  // its arguments (argv[1..])
  int nodes = 1;
  int ranks_per_node = 1;
  // Uneven nodes: ranks on each node (overrides nodes x ranks_per_node when not empty).
  std::vector<int> node_sizes;
  // After the first failure, how long the other ranks get to notice (through the store's abort
  // message) and report it themselves before they are killed. COLL_LAUNCH_GRACE overrides.
  double grace_s = 10;
};

// "3,2" -> {3, 2}: the --node-sizes syntax of collbench, collrun and colltopo. Throws
// InvalidArgument (one line, quoting the text) unless every entry is a count in [1, 256].
std::vector<int> parse_node_sizes(const std::string& text);

// This process's environment with `settings` ("NAME=value") in place of any entries they name:
// what a launched program gets.
std::vector<std::string> environment_with(const std::vector<std::string>& settings);

// Returns 0 when every rank exits 0; otherwise the first failing rank's exit status (1 if it
// was killed by a signal), after printing which rank failed and why.
int launch_local(const LaunchSpec& spec);

// True in a rank process: one launch_local started (COLL_RANK) or one an MPI launcher started
// (mpirun, srun --mpi=pmix: coll::launched_by_mpi).
bool is_rank_process();

// The running executable's path (empty if /proc/self/exe cannot be read), so that a tool can
// launch itself as its ranks.
std::string own_executable();

}  // namespace coll::tools
