#include "explain.hpp"

#include <cstdio>

#include "coll/selector.hpp"

namespace collbench {
namespace {

namespace model = coll::model;

std::string link_line(const char* label, const model::LinkParams& link) {
  char text[160];
  std::snprintf(text, sizeof text, "#   %-10s alpha %8.2f us   beta %8.4f ns/B (%6.2f GB/s)\n",
                label, link.alpha_s * 1e6, link.beta_s_per_byte * 1e9, 1e-9 / link.beta_s_per_byte);
  return text;
}

std::string terms(const model::Prediction& p) {
  char text[160];
  std::snprintf(text, sizeof text, "%12.2f %10.2f %10.2f %10.2f  %s", p.total_s() * 1e6,
                p.latency_s * 1e6, p.bandwidth_s * 1e6, p.reduction_s * 1e6, p.detail.c_str());
  return text;
}

}  // namespace

std::string describe_params(const model::CostParams& params) {
  char gamma[160];
  std::snprintf(gamma, sizeof gamma, "#   %-10s gamma %8.4f ns/B (%6.2f GB/s)\n", "reduction",
                params.gamma_s_per_byte * 1e9, 1e-9 / params.gamma_s_per_byte);
  std::string reads;
  if (params.transport.peer_read_call_s > 0) {
    char line[160];
    std::snprintf(line, sizeof line, "#   %-10s read  %8.2f us per call (measured at connect)\n",
                  "cross-mem", params.transport.peer_read_call_s * 1e6);
    reads = line;
  }
  if (params.transport.slot_handoff_s > 0) {
    char line[160];
    std::snprintf(line, sizeof line, "#   %-10s hand-off %5.2f us per round\n", "node slots",
                  params.transport.slot_handoff_s * 1e6);
    reads += line;
  }
  return "# cost model parameters: " + params.source + "\n" +
         link_line("intra-node", params.intra) + link_line("inter-node", params.inter) + gamma +
         reads;
}

void print_explanation(const coll::Comm& comm, const SweepOptions& options) {
  const coll::Selector& selector = comm.selector();
  if (comm.rank() != 0) return;
  std::printf("%s#   job: %s; buffers %s\n", describe_params(selector.params()).c_str(),
              selector.shape().describe().c_str(),
              options.buffers == coll::Sharing::WithPeers ? "shared (peers map them)" : "private");
  std::printf("# explain %12s  %-20s %12s %10s %10s %10s  %s\n", "size (B)", "algorithm",
              "predicted", "latency", "bandwidth", "reduction", "detail");
  std::printf("# %20s  %-20s %12s %10s %10s %10s\n", "", "", "(us)", "(us)", "(us)", "(us)");
  const std::size_t elem = coll::dtype_size(options.type);
  for (std::size_t bytes = options.min_bytes; bytes <= options.max_bytes;
       bytes *= options.step_factor) {
    const std::size_t message = bytes / elem * elem;  // what the sweep moves
    const bool mapped = options.buffers == coll::Sharing::WithPeers;
    const auto explanation = selector.explain(message, mapped);
    bool first = true;
    for (const auto& candidate : explanation.candidates) {
      const std::string size = first ? std::to_string(message) : "";
      first = false;
      if (candidate.prediction) {
        std::printf("# %20s  %-20s %s\n", size.c_str(), candidate.name.c_str(),
                    terms(*candidate.prediction).c_str());
      } else {
        std::printf("# %20s  %-20s (%s)\n", size.c_str(), candidate.name.c_str(),
                    candidate.note.c_str());
      }
    }
    std::printf("# %20s  -> choice: %s\n", "", explanation.reason.c_str());
    // The candidates above are priced out of place; in place only where the choice differs.
    const auto in_place = selector.explain(message, mapped, true);
    if (in_place.winner != explanation.winner) {
      std::printf("# %20s  -> in place: %s\n", "", in_place.reason.c_str());
    }
    if (bytes == 0) break;
  }
  std::fflush(stdout);
}

std::optional<ModelPrediction> predict_for(const coll::Comm& comm, const std::string& algorithm,
                                           std::size_t bytes, bool buffers_mapped) {
  try {  // a prediction is commentary: a bad calibration file must not stop the measurements
    const std::string name = comm.resolve_algorithm(algorithm, bytes, buffers_mapped);
    const auto prediction = comm.selector().predict(name, bytes, buffers_mapped);
    if (!prediction) return std::nullopt;
    return ModelPrediction{name, prediction->total_s() * 1e6, prediction->lead_s * 1e6};
  } catch (const coll::Error&) {
    return std::nullopt;
  }
}

}  // namespace collbench
