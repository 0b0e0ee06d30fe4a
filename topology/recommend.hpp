// colltopo --recommend: what libcoll's cost model would pick for this job's node map at a few
// message sizes, and why. Kept apart from the rest so it follows the model's interface alone.
#pragma once

#include <string>

#include "coll/selector.hpp"
#include "coll/tools/json_writer.hpp"

namespace colltopo {

// Appends the recommendation to `out` and, when `json` is given, an array "recommend" to it.
// Returns false (and appends nothing) when there is nothing to recommend.
bool recommend(std::string& out, coll::tools::JsonWriter* json, const coll::Selector& selector);

}  // namespace colltopo
