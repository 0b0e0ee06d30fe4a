// Chrome trace writer. Format: the "Trace Event Format" document (Google, the JSON Object Format
// with a "traceEvents" array); "X" events carry ts and dur in microseconds, "M" events name
// processes and threads.
#include "coll/tools/chrome_trace.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "coll/error.hpp"

namespace coll::tools {
namespace {

using Json = nlohmann::ordered_json;

double finite(double value, const char* what) {
  if (!std::isfinite(value)) {
    throw Error(Status::InvalidArgument, std::string("chrome trace: ") + what + " is not finite");
  }
  return value;
}

// Microseconds, rounded to the nanosecond.
double micros(double seconds, const char* what) {
  return finite(std::round(seconds * 1e9) / 1e3, what);
}

Json metadata(const char* kind, int pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", kind}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

std::string chrome_trace_json(const std::vector<TraceEvent>& events) {
  std::vector<std::string> lanes;          // tid = position + 1
  std::vector<std::pair<int, int>> named;  // (rank, tid) pairs with a thread_name event
  std::vector<int> ranks;
  Json trace_events = Json::array();
  for (const TraceEvent& event : events) {
    if (event.duration_s < 0) {
      throw Error(Status::InvalidArgument,
                  "chrome trace: event '" + event.name + "' has a negative duration");
    }
    std::size_t lane = 0;
    while (lane < lanes.size() && lanes[lane] != event.lane) ++lane;
    if (lane == lanes.size()) lanes.push_back(event.lane);
    const int tid = static_cast<int>(lane) + 1;
    if (std::find(ranks.begin(), ranks.end(), event.rank) == ranks.end()) {
      ranks.push_back(event.rank);
      trace_events.push_back(
          metadata("process_name", event.rank, 0, "rank " + std::to_string(event.rank)));
    }
    if (std::find(named.begin(), named.end(), std::make_pair(event.rank, tid)) == named.end()) {
      named.emplace_back(event.rank, tid);
      trace_events.push_back(metadata("thread_name", event.rank, tid, event.lane));
    }
    Json args = Json::object();
    for (const auto& [key, value] : event.args) {
      if (const auto* number = std::get_if<double>(&value)) {
        args[key] = finite(*number, "argument");
      } else {
        args[key] = std::get<std::string>(value);
      }
    }
    trace_events.push_back({{"ph", "X"},
                            {"name", event.name},
                            {"cat", event.lane},
                            {"pid", event.rank},
                            {"tid", tid},
                            {"ts", micros(event.start_s, "start time")},
                            {"dur", micros(event.duration_s, "duration")},
                            {"args", std::move(args)}});
  }
  const Json document = {{"displayTimeUnit", "ms"}, {"traceEvents", std::move(trace_events)}};
  return document.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

void write_chrome_trace(const std::string& path, const std::vector<TraceEvent>& events) {
  const std::string text = chrome_trace_json(events);
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw Error(Status::SystemError, "cannot write chrome trace '" + path + "'");
}

}  // namespace coll::tools
