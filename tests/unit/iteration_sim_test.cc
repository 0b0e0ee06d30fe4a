// The WFBP timeline by hand on tiny cases (hidden, queued, exposed), the non-overlapped case, and
// the Chrome trace writer, parsed back with a minimal JSON reader.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <memory>

#include "coll/error.hpp"
#include "schedule/chrome_trace.hpp"
#include "schedule/iteration_sim.hpp"

namespace coll::schedule {
namespace {

AllreduceCost constant(double seconds) {
  return [=](std::size_t) { return seconds; };
}

const ComputeProfile kThreeSeconds{"test", {1.0, 1.0, 1.0}};

TEST(IterationSim, OverlapHidesAllButTheLastAllreduce) {
  // Ready at 1, 2, 3 s; 0.5 s each: [1, 1.5], [2, 2.5], [3, 3.5].
  const SimResult r =
      simulate_wfbp({{0, 1, 8}, {1, 2, 8}, {2, 3, 8}}, kThreeSeconds, constant(0.5));
  EXPECT_DOUBLE_EQ(r.backward_s, 3.0);
  EXPECT_DOUBLE_EQ(r.comm_s, 1.5);
  EXPECT_DOUBLE_EQ(r.iteration_s, 3.5);
  EXPECT_DOUBLE_EQ(r.exposed_s, 0.5);
  EXPECT_DOUBLE_EQ(r.hidden_fraction, 1.0 - 0.5 / 1.5);
  ASSERT_EQ(r.buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(r.buckets[1].ready_s, 2.0);
  EXPECT_DOUBLE_EQ(r.buckets[1].start_s, 2.0);
  EXPECT_DOUBLE_EQ(r.buckets[1].end_s, 2.5);
  EXPECT_EQ(r.buckets[1].bytes, 8u);
}

TEST(IterationSim, FullyHiddenWhenTheLastBucketIsEmpty) {
  const SimResult r =
      simulate_wfbp({{0, 1, 8}, {1, 2, 8}, {2, 3, 0}}, kThreeSeconds, constant(0.5));
  EXPECT_DOUBLE_EQ(r.iteration_s, 3.0);
  EXPECT_DOUBLE_EQ(r.exposed_s, 0.0);
  EXPECT_DOUBLE_EQ(r.comm_s, 1.0);
  EXPECT_DOUBLE_EQ(r.hidden_fraction, 1.0);
}

TEST(IterationSim, SlowAllreducesQueue) {
  // 2 s each: [1, 3], [3, 5], [5, 7].
  const SimResult r = simulate_wfbp({{0, 1, 8}, {1, 2, 8}, {2, 3, 8}}, kThreeSeconds, constant(2));
  EXPECT_DOUBLE_EQ(r.buckets[2].start_s, 5.0);
  EXPECT_DOUBLE_EQ(r.iteration_s, 7.0);
  EXPECT_DOUBLE_EQ(r.exposed_s, 4.0);
  EXPECT_DOUBLE_EQ(r.hidden_fraction, 1.0 - 4.0 / 6.0);
}

TEST(IterationSim, FusedBucketWaitsForItsLastTensor) {
  const SimResult r = simulate_wfbp({{0, 2, 16}, {2, 3, 8}}, kThreeSeconds, constant(0.5));
  EXPECT_DOUBLE_EQ(r.buckets[0].ready_s, 2.0);
  EXPECT_DOUBLE_EQ(r.buckets[0].end_s, 2.5);
  EXPECT_DOUBLE_EQ(r.iteration_s, 3.5);
}

TEST(IterationSim, NoOverlapExposesEverything) {
  const SimResult r =
      simulate_no_overlap({{0, 1, 8}, {1, 2, 8}, {2, 3, 8}}, kThreeSeconds, constant(0.5));
  EXPECT_DOUBLE_EQ(r.buckets[0].start_s, 3.0);
  EXPECT_DOUBLE_EQ(r.iteration_s, 4.5);
  EXPECT_DOUBLE_EQ(r.exposed_s, 1.5);
  EXPECT_DOUBLE_EQ(r.hidden_fraction, 0.0);
}

TEST(IterationSim, EmptyModelAndBadPlans) {
  const SimResult r = simulate_wfbp({}, ComputeProfile{"none", {}}, constant(1));
  EXPECT_EQ(r.iteration_s, 0.0);
  EXPECT_EQ(r.hidden_fraction, 1.0);
  EXPECT_THROW(simulate_wfbp({{0, 2, 8}}, kThreeSeconds, constant(1)), Error);
  EXPECT_THROW(simulate_wfbp({{0, 2, 8}, {1, 3, 8}}, kThreeSeconds, constant(1)), Error);
  EXPECT_THROW(simulate_wfbp({{0, 3, 8}}, kThreeSeconds, constant(-1)), Error);
}

// A minimal JSON reader: enough to check that the trace parses and to look at its events.
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
};

class Reader {
 public:
  explicit Reader(const std::string& text) : s_(text) {}
  Json document() {
    Json value = parse();
    space();
    if (i_ != s_.size()) fail("trailing text");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error(why + " at offset " + std::to_string(i_));
  }
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  void expect(char c) {
    space();
    if (i_ >= s_.size() || s_[i_] != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= s_.size()) fail("unterminated string");
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("raw control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      const char e = s_.at(i_++);
      const std::string simple = "\"\\/bfnrt", meaning = "\"\\/\b\f\n\r\t";
      if (const auto k = simple.find(e); k != std::string::npos) {
        out += meaning[k];
      } else if (e == 'u') {
        out += static_cast<char>(std::stoi(s_.substr(i_, 4), nullptr, 16));
        i_ += 4;
      } else {
        fail("bad escape");
      }
    }
  }
  Json parse() {
    space();
    if (i_ >= s_.size()) fail("unexpected end");
    Json value;
    const char c = s_[i_];
    if (c == '{') {
      value.kind = Json::Object;
      ++i_;
      space();
      if (s_[i_] == '}') return ++i_, value;
      do {
        const std::string key = string();
        expect(':');
        value.fields[key] = parse();
        space();
      } while (s_[i_] == ',' && ++i_);
      expect('}');
    } else if (c == '[') {
      value.kind = Json::Array;
      ++i_;
      space();
      if (s_[i_] == ']') return ++i_, value;
      do {
        value.items.push_back(parse());
        space();
      } while (s_[i_] == ',' && ++i_);
      expect(']');
    } else if (c == '"') {
      value.kind = Json::String;
      value.text = string();
    } else if (s_.compare(i_, 4, "true") == 0 || s_.compare(i_, 5, "false") == 0) {
      value.kind = Json::Bool;
      i_ += s_[i_] == 't' ? 4 : 5;
    } else if (s_.compare(i_, 4, "null") == 0) {
      i_ += 4;
    } else {
      std::size_t used = 0;
      value.kind = Json::Number;
      value.number = std::stod(s_.substr(i_), &used);
      i_ += used;
    }
    return value;
  }
  const std::string& s_;
  std::size_t i_ = 0;
};

std::vector<Json> events_with_phase(const Json& doc, const std::string& phase) {
  std::vector<Json> out;
  for (const Json& event : doc.fields.at("traceEvents").items) {
    if (event.fields.at("ph").text == phase) out.push_back(event);
  }
  return out;
}

TEST(ChromeTrace, WritesParsableCompleteEvents) {
  const std::vector<TraceEvent> events{
      {0, "compute", "backward fc8", 0.0, 1.5e-3, {{"tensor", 0.0}}},
      {0,
       "comm",
       "allreduce \"fc\"\\0\n\x01",
       1.5e-3,
       2e-3,
       {{"bytes", 4096.0}, {"tensors", "0-1"}}},
      {1, "compute", "backward fc8", 0.0, 1.6e-3, {}},
  };
  const std::string text = chrome_trace_json(events);
  const Json doc = Reader(text).document();
  const auto complete = events_with_phase(doc, "X");
  ASSERT_EQ(complete.size(), 3u);
  EXPECT_EQ(complete[1].fields.at("name").text, "allreduce \"fc\"\\0\n\x01");
  EXPECT_DOUBLE_EQ(complete[1].fields.at("ts").number, 1500.0);
  EXPECT_DOUBLE_EQ(complete[1].fields.at("dur").number, 2000.0);
  EXPECT_EQ(complete[1].fields.at("pid").number, 0);
  EXPECT_EQ(complete[1].fields.at("tid").number, 2);  // second lane
  EXPECT_EQ(complete[2].fields.at("pid").number, 1);
  EXPECT_EQ(complete[2].fields.at("tid").number, 1);
  EXPECT_EQ(complete[1].fields.at("args").fields.at("bytes").number, 4096);
  EXPECT_EQ(complete[1].fields.at("args").fields.at("tensors").text, "0-1");
  // Names: two processes ("rank 0", "rank 1") and three (rank, lane) threads.
  const auto metadata = events_with_phase(doc, "M");
  ASSERT_EQ(metadata.size(), 5u);
  EXPECT_EQ(metadata[0].fields.at("name").text, "process_name");
  EXPECT_EQ(metadata[0].fields.at("args").fields.at("name").text, "rank 0");
  EXPECT_EQ(metadata[1].fields.at("args").fields.at("name").text, "compute");
}

TEST(ChromeTrace, EmptyAndInvalidEvents) {
  const Json doc = Reader(chrome_trace_json({})).document();
  EXPECT_TRUE(doc.fields.at("traceEvents").items.empty());
  EXPECT_THROW(chrome_trace_json({{0, "comm", "x", 0, -1, {}}}), Error);
  EXPECT_THROW(chrome_trace_json({{0, "comm", "x", 1.0 / 0.0, 1, {}}}), Error);
}

TEST(ChromeTrace, SimulatedIterationBecomesEvents) {
  const std::vector<Bucket> plan{{0, 2, 16}, {2, 3, 8}};
  const ComputeProfile profile{"test", {1.0, 0.0, 1.0}};
  const SimResult result = simulate_wfbp(plan, profile, constant(0.5));
  const auto events = simulation_events(result, plan, profile, 3);
  const Json doc = Reader(chrome_trace_json(events)).document();
  const auto complete = events_with_phase(doc, "X");
  ASSERT_EQ(complete.size(), 4u);  // 2 compute (tensor 1 takes 0 s) + 2 all-reduces
  EXPECT_EQ(complete[2].fields.at("name").text, "allreduce 0");
  EXPECT_DOUBLE_EQ(complete[2].fields.at("ts").number, 1e6);
  EXPECT_DOUBLE_EQ(complete[3].fields.at("ts").number, 2e6);
  EXPECT_EQ(complete[3].fields.at("pid").number, 3);
  EXPECT_EQ(complete[3].fields.at("args").fields.at("tensors").text, "2-2");
}

}  // namespace
}  // namespace coll::schedule
