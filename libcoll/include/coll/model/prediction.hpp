// A predicted all-reduce time, split into latency, bandwidth and reduction terms so that a
// choice can be explained. Each algorithm's file computes its own (AlgorithmInfo::cost).
#pragma once

#include <cstdio>
#include <string>

namespace coll::model {

struct Prediction {
  std::string algorithm;
  double latency_s = 0;    // the alpha terms
  double bandwidth_s = 0;  // the beta terms
  double reduction_s = 0;  // the gamma terms
  std::string detail;      // steps, link class, segments: what the terms were made of
  // Back to back with another all-reduce of the same algorithm, how much of each one's end and
  // start can overlap (a parameter server takes the next one's pushes while it sends this one's
  // pulls); 0 where the next one needs every rank done with this one.
  double lead_s = 0;
  double total_s() const { return latency_s + bandwidth_s + reduction_s; }
};

// printf-style text for Prediction::detail.
template <typename... Values>
std::string detail_text(const char* pattern, Values... values) {
  char text[256];
  std::snprintf(text, sizeof text, pattern, values...);
  return text;
}

}  // namespace coll::model
