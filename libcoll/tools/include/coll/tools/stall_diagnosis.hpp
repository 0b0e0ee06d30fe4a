// Which rank holds a failed job up. A rank that times out blames the peer it waited for, which
// may itself be waiting for another; the launcher knows every rank's process state and, from
// the store, what each rank that waited a while was waiting for, and follows the waits to the
// rank that is not waiting on anyone: the one that stalled.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace coll::tools {

struct RankWaitState {
  bool running = true;          // its process has not exited
  bool stopped = false;         // its process is stopped (SIGSTOP, a debugger)
  std::optional<int> waits_on;  // the peer of its last published wait, if any
};

// The stalled rank and why ("rank 2 stalled: its process is stopped; ranks 0, 1, 3 waited for
// it"), or nothing when no process is stopped and the failure of `failed_rank` was not a stall
// (it waited on no one) or the waits lead nowhere. `ranks` is indexed by rank.
std::optional<std::string> find_stalled_rank(int failed_rank,
                                             const std::vector<RankWaitState>& ranks);

// True when /proc says process `pid` is stopped (state T or t).
bool process_is_stopped(int pid);

}  // namespace coll::tools
