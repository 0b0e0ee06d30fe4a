// Chrome trace writer. Format: the "Trace Event Format" document (Google, the JSON Object Format
// with a "traceEvents" array); "X" events carry ts and dur in microseconds, "M" events name
// processes and threads.
#include "schedule/chrome_trace.hpp"

#include "core/json_string.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "coll/error.hpp"

namespace coll::schedule {
namespace {

void append_string(std::string& out, const std::string& text) {
  out += json_quoted(text);
}

void append_number(std::string& out, double value, const char* what) {
  if (!std::isfinite(value)) {
    throw Error(Status::InvalidArgument, std::string("chrome trace: ") + what + " is not finite");
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  out += text;
}

// Microseconds, rounded to the nanosecond.
void append_micros(std::string& out, double seconds, const char* what) {
  append_number(out, std::round(seconds * 1e9) / 1e3, what);
}

void append_metadata(std::string& out, const char* kind, int pid, int tid,
                     const std::string& name) {
  out += "{\"ph\":\"M\",\"name\":\"";
  out += kind;
  out += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid);
  out += ",\"args\":{\"name\":";
  append_string(out, name);
  out += "}}";
}

}  // namespace

std::string chrome_trace_json(const std::vector<TraceEvent>& events) {
  std::vector<std::string> lanes;          // tid = position + 1
  std::vector<std::pair<int, int>> named;  // (rank, tid) pairs with a thread_name event
  std::vector<int> ranks;
  std::string body;
  auto add = [&body](const std::string& event) {
    body += body.empty() ? "\n" : ",\n";
    body += event;
  };
  for (const TraceEvent& event : events) {
    if (event.duration_s < 0) {
      throw Error(Status::InvalidArgument,
                  "chrome trace: event '" + event.name + "' has a negative duration");
    }
    std::size_t lane = 0;
    while (lane < lanes.size() && lanes[lane] != event.lane) ++lane;
    if (lane == lanes.size()) lanes.push_back(event.lane);
    const int tid = static_cast<int>(lane) + 1;
    std::string text;
    if (std::find(ranks.begin(), ranks.end(), event.rank) == ranks.end()) {
      ranks.push_back(event.rank);
      append_metadata(text, "process_name", event.rank, 0, "rank " + std::to_string(event.rank));
      add(text);
      text.clear();
    }
    if (std::find(named.begin(), named.end(), std::make_pair(event.rank, tid)) == named.end()) {
      named.emplace_back(event.rank, tid);
      append_metadata(text, "thread_name", event.rank, tid, event.lane);
      add(text);
      text.clear();
    }
    text += "{\"ph\":\"X\",\"name\":";
    append_string(text, event.name);
    text += ",\"cat\":";
    append_string(text, event.lane);
    text += ",\"pid\":" + std::to_string(event.rank) + ",\"tid\":" + std::to_string(tid);
    text += ",\"ts\":";
    append_micros(text, event.start_s, "start time");
    text += ",\"dur\":";
    append_micros(text, event.duration_s, "duration");
    text += ",\"args\":{";
    bool first = true;
    for (const auto& [key, value] : event.args) {
      if (!first) text += ',';
      first = false;
      append_string(text, key);
      text += ':';
      if (const auto* number = std::get_if<double>(&value)) {
        append_number(text, *number, "argument");
      } else {
        append_string(text, std::get<std::string>(value));
      }
    }
    text += "}}";
    add(text);
  }
  return "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[" + body + "\n]}\n";
}

void write_chrome_trace(const std::string& path, const std::vector<TraceEvent>& events) {
  const std::string text = chrome_trace_json(events);
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw Error(Status::SystemError, "cannot write chrome trace '" + path + "'");
}

std::vector<TraceEvent> simulation_events(const SimResult& result, const std::vector<Bucket>& plan,
                                          const ComputeProfile& profile, int rank) {
  std::vector<TraceEvent> events;
  double time = 0;
  for (std::size_t i = 0; i < profile.backward_s.size(); ++i) {
    const double duration = profile.backward_s[i];
    if (duration > 0) {
      events.push_back({rank,
                        "compute",
                        "backward " + std::to_string(i),
                        time,
                        duration,
                        {{"tensor", static_cast<double>(i)}}});
    }
    time += duration;
  }
  for (std::size_t b = 0; b < result.buckets.size() && b < plan.size(); ++b) {
    const BucketTiming& timing = result.buckets[b];
    events.push_back(
        {rank,
         "comm",
         "allreduce " + std::to_string(b),
         timing.start_s,
         timing.end_s - timing.start_s,
         {{"bytes", static_cast<double>(timing.bytes)},
          {"tensors", std::to_string(plan[b].first) + "-" + std::to_string(plan[b].last - 1)},
          {"ready_us", timing.ready_s * 1e6}}});
  }
  return events;
}

}  // namespace coll::schedule
