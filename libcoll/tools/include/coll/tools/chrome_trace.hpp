// Chrome trace files (the JSON "traceEvents" format read by chrome://tracing and Perfetto):
// one complete ("ph":"X") event per interval, pid = rank, one thread per lane ("compute",
// "comm"), named by metadata events so the viewer shows "rank N" / lane names.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace coll::tools {

using TraceArg = std::variant<std::string, double>;

struct TraceEvent {
  int rank = 0;
  std::string lane;  // e.g. "compute", "comm"; each lane becomes a thread of the rank's process
  std::string name;
  double start_s = 0;
  double duration_s = 0;
  std::map<std::string, TraceArg> args;  // shown in the viewer's details pane
};

// The trace document. Lanes get thread ids 1, 2, ... in order of first appearance (the same ids on
// every rank); times are written in microseconds. Throws coll::Error(InvalidArgument) for a
// negative duration or a non-finite time or argument.
std::string chrome_trace_json(const std::vector<TraceEvent>& events);
// Writes it to `path`; throws coll::Error naming the path on failure.
void write_chrome_trace(const std::string& path, const std::vector<TraceEvent>& events);

}  // namespace coll::tools
