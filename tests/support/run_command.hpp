// Runs a shell command for a test, with a hard time limit, capturing its combined output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <string>

namespace coll::testing {

struct CommandResult {
  int exit_code = -1;  // 124 when the time limit killed it
  std::string output;  // stdout and stderr, interleaved
};

inline CommandResult run_command(const std::string& command, int limit_s = 120) {
  // `env` lets the command start with VAR=value assignments.
  const std::string wrapped =
      "timeout -k 5 " + std::to_string(limit_s) + " env " + command + " 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(wrapped.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    result.output.append(buffer, n);
  }
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline bool says(const CommandResult& result, const std::string& part) {
  return result.output.find(part) != std::string::npos;
}

#ifdef RANK_PROGRAM_PATH
// rank_program's bit-exact check of `algorithm` (every type and op, in and out of place) over
// nodes x ranks_per_node processes with COLL_DEBUG=INFO (the transport describes itself), for
// counts 0, 1, 7, ranks - 1, and `more_counts`.
// `mode`: rank_program's check, check-shared or check-shared-even.
inline CommandResult check_algorithm(const std::string& environment, const std::string& algorithm,
                                     int nodes, int ranks_per_node, const std::string& more_counts,
                                     const std::string& mode = "check") {
  const int ranks = nodes * ranks_per_node;
  const std::string counts =
      "0 1 7 " + std::to_string(ranks > 1 ? ranks - 1 : 0) + " " + more_counts;
  return run_command(environment + " COLL_DEBUG=INFO " + COLLRUN_PATH + " --nodes " +
                         std::to_string(nodes) + " --ranks-per-node " +
                         std::to_string(ranks_per_node) + " " + RANK_PROGRAM_PATH + " " + mode +
                         " " + algorithm + " " + counts,
                     300);
}
#endif

// Processes whose command line contains `needle` (bracketing its first character keeps the
// pattern from matching the shell that runs pgrep). A process killed a moment ago may still be
// on its way out, so this looks again for up to 3 s; an orphan stays and is counted.
inline int count_processes(const std::string& needle) {
  std::string command = "pgrep -c -f '[";
  command.append(needle, 0, 1).append("]").append(needle, 1).append("'");
  int found = 0;
  for (int attempt = 0; attempt < 30; ++attempt) {
    found = std::atoi(run_command(command, 10).output.c_str());
    if (found == 0) break;
    ::usleep(100000);
  }
  return found;
}

}  // namespace coll::testing
