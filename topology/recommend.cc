// Asks the communicator's cost model (algorithms/selector.hpp) what `auto` would run for this
// job, and why.
#include "recommend.hpp"

#include "coll/selector.hpp"
#include "text_format.hpp"

namespace colltopo {

bool recommend(std::string& out, coll::tools::JsonWriter* json, const coll::Selector& selector) {
  const auto& shape = selector.shape();
  const auto& params = selector.params();
  appendf(out, "recommendation for %s (cost model: %s):\n", shape.describe().c_str(),
          params.source.c_str());
  appendf(out, "  %10s  %-20s %s\n", "bytes", "algorithm", "why");
  if (json) {
    json->begin_object("recommend").field("shape", shape.describe());
    json->field("params", params.source).begin_array("sizes");
  }
  for (std::size_t bytes : {std::size_t{8}, std::size_t{64} << 10, std::size_t{1} << 20,
                            std::size_t{16} << 20, std::size_t{256} << 20}) {
    const std::string choice = selector.choose(bytes);
    const auto why = selector.explain(bytes);
    appendf(out, "  %10zu  %-20s %s\n", bytes, choice.c_str(), why.reason.c_str());
    if (json) json->begin_object().field("bytes", bytes).field("algorithm", choice);
    if (json) json->field("reason", why.reason).begin_array("candidates");
    for (const auto& candidate : why.candidates) {
      if (candidate.prediction) {
        appendf(out, "  %10s    %-20s %10.1f us  (%s)\n", "", candidate.name.c_str(),
                candidate.prediction->total_s() * 1e6, candidate.prediction->detail.c_str());
      } else {
        appendf(out, "  %10s    %-20s %10s     (%s)\n", "", candidate.name.c_str(), "-",
                candidate.note.c_str());
      }
      if (!json) continue;
      json->begin_object().field("name", candidate.name);
      if (candidate.prediction)
        json->field("predicted_s", candidate.prediction->total_s())
            .field("detail", candidate.prediction->detail);
      else
        json->field("note", candidate.note);
      json->end_object();
    }
    if (json) json->end_array().end_object();
  }
  if (json) json->end_array().end_object();
  return true;
}

}  // namespace colltopo
