// The algorithms' tuning knobs, read from COLL_* by the communicator; the cost model prices with
// them too, so tools that predict (collbench --explain, --model-only) see the same values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>

namespace coll {

// The settings of particular algorithms (the parameter server's COLL_PS_SERVERS, hierarchical's
// COLL_HIER_INTER, ...) as text, by variable name. Each algorithm declares its own with its
// registration (name, default, accepted values, a line of documentation: coll/algorithms.hpp's
// describe_algorithm_options); an option not set here has its declared default. Config reads them
// from the environment; a tool sets them here, and the communicator checks what it was given as
// it would the variables.
class AlgorithmOptions {
 public:
  void set(std::string_view variable, std::string value) {
    values_.insert_or_assign(std::string(variable), std::move(value));
  }
  const std::string* find(std::string_view variable) const {  // nullptr: not set
    const auto found = values_.find(variable);
    return found == values_.end() ? nullptr : &found->second;
  }
  const std::map<std::string, std::string, std::less<>>& values() const { return values_; }

 private:
  std::map<std::string, std::string, std::less<>> values_;
};

struct Tuning {
  std::size_t segment_bytes = 256 << 10;  // COLL_SEGMENT_BYTES: pipelining unit
  // COLL_NET_SEGMENT_BYTES (else COLL_SEGMENT_BYTES where that is set): the pipelining unit of a
  // collective whose ranks are on several nodes. A message between nodes costs a header, a match
  // and, over TCP, a pass through the receiver's staging, so the unit is larger than within a
  // node: a default, measured on emulated nodes (docs/bandwidth.md).
  std::size_t net_segment_bytes = 1 << 20;
  // The pipelining unit of a collective over ranks of one node or of several.
  std::size_t segment_bytes_for(bool spans_nodes) const {
    return spans_nodes ? net_segment_bytes : segment_bytes;
  }
  // The segments (at least 1) a block of `bytes` is cut into, as the cost model counts them.
  double segments_in(double bytes, bool spans_nodes) const {
    const auto unit = static_cast<double>(std::max<std::size_t>(1, segment_bytes_for(spans_nodes)));
    return std::max(1.0, std::ceil(bytes / unit));
  }
  int window = 4;  // COLL_WINDOW: receives kept in flight
  // COLL_CHECK_ARGS: ranks compare their calls before each collective, a round of messages the
  // cost model adds to algorithms that do not carry the check in their own first message.
  bool check_arguments = true;
  // Options particular algorithms declare (COLL_PS_*, COLL_HIER_*).
  AlgorithmOptions algorithm_options;
};

}  // namespace coll
