#include "coll/tools/stall_diagnosis.hpp"

#include <fstream>
#include <iterator>
#include <set>

namespace coll::tools {
namespace {

std::string waiters_of(int stalled, const std::vector<RankWaitState>& ranks) {
  std::string waiters;
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    if (ranks[rank].waits_on != stalled) continue;
    waiters += (waiters.empty() ? "" : ", ") + std::to_string(rank);
  }
  if (waiters.empty()) return "";
  return waiters.find(',') == std::string::npos ? "; rank " + waiters + " waited for it"
                                                : "; ranks " + waiters + " waited for it";
}

}  // namespace

std::optional<std::string> find_stalled_rank(int failed_rank,
                                             const std::vector<RankWaitState>& ranks) {
  const auto size = static_cast<int>(ranks.size());
  // A stopped process cannot make progress, whoever waited for it (in a collective, or in the
  // store while the job starts or ends).
  for (int rank = 0; rank < size; ++rank) {
    if (ranks[rank].running && ranks[rank].stopped) {
      return "rank " + std::to_string(rank) + " stalled: its process is stopped" +
             waiters_of(rank, ranks);
    }
  }
  if (failed_rank < 0 || failed_rank >= size || !ranks[failed_rank].waits_on) return std::nullopt;
  std::set<int> visited;
  std::string cycle;
  int rank = failed_rank;
  while (ranks[rank].waits_on) {
    const int next = *ranks[rank].waits_on;
    if (next < 0 || next >= size) return std::nullopt;
    if (!visited.insert(rank).second) {
      // Every rank on the path waits for the next: they are in different collectives.
      for (int member = rank;;) {
        cycle += std::to_string(member) + " -> ";
        member = *ranks[member].waits_on;
        if (member == rank) break;
      }
      return "ranks wait for each other in a cycle (" + cycle + std::to_string(rank) +
             "): they called different collectives";
    }
    rank = next;
  }
  return "rank " + std::to_string(rank) + " stalled: it " +
         (ranks[rank].running ? "is waiting on no other rank" : "exited") + waiters_of(rank, ranks);
}

bool process_is_stopped(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  // "pid (comm) S ...": the command may contain spaces and parentheses, the state follows the
  // last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  const char state = text[close + 2];
  return state == 'T' || state == 't';
}

}  // namespace coll::tools
