#include "core/log.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "coll/env.hpp"

namespace coll {

std::optional<LogLevel> parse_log_level(std::string_view text) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "WARN") return LogLevel::Warn;
  if (upper == "INFO") return LogLevel::Info;
  if (upper == "TRACE") return LogLevel::Trace;
  return std::nullopt;
}

LogLevel log_level() {
  static const LogLevel level = [] {
    const auto text = env_string("COLL_DEBUG");
    return text ? parse_log_level(*text).value_or(LogLevel::Warn) : LogLevel::Warn;
  }();
  return level;
}

void log_line(LogLevel level, int rank, std::string_view message) {
  if (!log_enabled(level)) return;
  static constexpr std::string_view kNames[] = {"WARN", "INFO", "TRACE"};
  std::string line = "[coll rank " + std::to_string(rank) + "] ";
  line += kNames[static_cast<int>(level)];
  line += ": ";
  line += message;
  line += '\n';
  // One write(2): a line from one rank is never split by another's.
  [[maybe_unused]] const auto written = ::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace coll
