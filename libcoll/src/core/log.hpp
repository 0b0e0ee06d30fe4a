// One small logger: COLL_DEBUG=WARN|INFO|TRACE (default WARN) chooses how much the library says
// on stderr; every line names the rank it comes from.
#pragma once

#include <optional>
#include <string_view>

namespace coll {

enum class LogLevel { Warn = 0, Info = 1, Trace = 2 };

std::optional<LogLevel> parse_log_level(std::string_view text);  // "WARN", "info", ...
// COLL_DEBUG, read once per process; WARN when unset. The communicator rejects a malformed
// value before anything is logged (see Config::from_environment).
LogLevel log_level();
inline bool log_enabled(LogLevel level) {
  return level <= log_level();
}

// "[coll rank 3] INFO: message" on stderr, written whole so that ranks' lines do not interleave.
// Callers test log_enabled first when the message is costly to build.
void log_line(LogLevel level, int rank, std::string_view message);

}  // namespace coll
