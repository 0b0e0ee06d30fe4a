// The Chrome trace writer: its document parsed back with nlohmann-json and its events checked.
#include "coll/tools/chrome_trace.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "coll/error.hpp"

namespace coll::tools {
namespace {

using Json = nlohmann::json;

std::vector<Json> events_with_phase(const Json& doc, const std::string& phase) {
  std::vector<Json> out;
  for (const Json& event : doc.at("traceEvents")) {
    if (event.at("ph") == phase) out.push_back(event);
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
  const Json doc = Json::parse(chrome_trace_json(events));
  EXPECT_EQ(doc.at("displayTimeUnit"), "ms");
  const auto complete = events_with_phase(doc, "X");
  ASSERT_EQ(complete.size(), 3u);
  EXPECT_EQ(complete[1].at("name"), "allreduce \"fc\"\\0\n\x01");
  EXPECT_EQ(complete[1].at("cat"), "comm");
  EXPECT_DOUBLE_EQ(complete[1].at("ts").get<double>(), 1500.0);
  EXPECT_DOUBLE_EQ(complete[1].at("dur").get<double>(), 2000.0);
  EXPECT_EQ(complete[1].at("pid"), 0);
  EXPECT_EQ(complete[1].at("tid"), 2);  // second lane
  EXPECT_EQ(complete[2].at("pid"), 1);
  EXPECT_EQ(complete[2].at("tid"), 1);
  EXPECT_EQ(complete[1].at("args").at("bytes"), 4096);
  EXPECT_EQ(complete[1].at("args").at("tensors"), "0-1");
  // Names: two processes ("rank 0", "rank 1") and three (rank, lane) threads.
  const auto metadata = events_with_phase(doc, "M");
  ASSERT_EQ(metadata.size(), 5u);
  EXPECT_EQ(metadata[0].at("name"), "process_name");
  EXPECT_EQ(metadata[0].at("args").at("name"), "rank 0");
  EXPECT_EQ(metadata[1].at("args").at("name"), "compute");
}

TEST(ChromeTrace, EmptyAndInvalidEvents) {
  const Json doc = Json::parse(chrome_trace_json({}));
  EXPECT_TRUE(doc.at("traceEvents").empty());
  EXPECT_THROW(chrome_trace_json({{0, "comm", "x", 0, -1, {}}}), Error);
  EXPECT_THROW(chrome_trace_json({{0, "comm", "x", 1.0 / 0.0, 1, {}}}), Error);
}

}  // namespace
}  // namespace coll::tools
