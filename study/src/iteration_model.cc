// The modelled iteration; see iteration_model.hpp. Every all-reduce is priced by its
// algorithm's own formula (AlgorithmInfo::cost) under the setup's tuning, so compositions
// (hierarchical_leader with COLL_HIER_INTER=ps, say) are priced as the library prices them.
#include "study/iteration_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "coll/algorithms.hpp"
#include "coll/error.hpp"
#include "coll/selector.hpp"

namespace coll::study {
namespace {

namespace model = coll::model;

[[noreturn]] void invalid(const std::string& message) {
  throw coll::Error(coll::Status::InvalidArgument, message);
}

coll::Tuning tuning_of(const IterationSetup& setup) {
  coll::Tuning tuning;
  auto& options = tuning.algorithm_options;  // the parameter server's and hierarchical's
  options.set("COLL_PS_SERVERS", std::to_string(setup.ps_servers));
  options.set("COLL_PS_DEDICATED", setup.ps_dedicated ? "1" : "0");
  if (!setup.inter.empty()) options.set("COLL_HIER_INTER", setup.inter);
  if (!setup.intra.empty()) options.set("COLL_HIER_INTRA", setup.intra);
  return tuning;
}

// Hierarchical's level algorithm `variable` (COLL_HIER_INTRA, COLL_HIER_INTER) under the setup.
std::string level(const IterationSetup& setup, const char* variable) {
  return coll::algorithm_option(tuning_of(setup), variable);
}

// The prediction under `tuning`, the setup's (tuning_of), which a caller pricing many sizes
// builds once.
coll::model::Prediction prediction(const std::string& algorithm, const IterationSetup& setup,
                                   const coll::Tuning& tuning, std::size_t bytes) {
  const auto priced = coll::predict(algorithm, setup.params, setup.shape, bytes, tuning);
  if (!priced) {
    invalid("algorithm '" + algorithm + "' has no cost formula" +
            (algorithm.starts_with("hierarchical")
                 ? " with levels " + level(setup, "COLL_HIER_INTRA") + " / " +
                       level(setup, "COLL_HIER_INTER")
                 : std::string()));
  }
  return *priced;
}

coll::model::Prediction prediction(const std::string& algorithm, const IterationSetup& setup,
                                   std::size_t bytes) {
  return prediction(algorithm, setup, tuning_of(setup), bytes);
}

double predicted(const std::string& algorithm, const IterationSetup& setup, std::size_t bytes) {
  return prediction(algorithm, setup, bytes).total_s();
}

// Whether an algorithm's formula is piecewise linear in the size under this setup (see
// price_sizes): every formula but tree's, and the hierarchical ones unless a level is a tree.
bool piecewise_linear(const std::string& algorithm, const IterationSetup& setup) {
  if (algorithm == "tree") return false;
  return !algorithm.starts_with("hierarchical") ||
         (level(setup, "COLL_HIER_INTRA") != "tree" && level(setup, "COLL_HIER_INTER") != "tree");
}

// The setups whose prices' minimum is the algorithm's price: for a hierarchical algorithm whose
// inter-node level is auto, one per candidate level (auto runs the composition priced fastest,
// and each composition alone is piecewise linear, where their minimum is not convex).
std::vector<IterationSetup> priced_setups(const std::string& algorithm,
                                          const IterationSetup& setup) {
  if (!algorithm.starts_with("hierarchical") || level(setup, "COLL_HIER_INTER") != "auto") {
    return {setup};
  }
  std::vector<IterationSetup> setups;
  for (const std::string_view inter : coll::kHierInterCandidates) {
    setups.push_back(setup);
    setups.back().inter = inter;
  }
  return setups;
}

// The all-reduce time of every size in `sizes` (sorted, distinct) for one algorithm. The
// formulas of ring, halving_doubling, ps and the hierarchical ones are sums and maxima of affine
// functions of the size (each step's slower link class), so convex and piecewise linear with
// few pieces: where the time at an interior size lies on the chord of its neighbours, the
// function is affine in between (a convex function touching a chord inside an interval is that
// chord), and the sizes in between are interpolated. A thousand-GPU MG-WFBP plan prices tens of
// thousands of sizes; this evaluates the formula O(pieces x log sizes) times. Tree's time is
// not piecewise linear (its segment count follows sqrt(M)): every size is evaluated.
std::vector<double> price_sizes(const std::vector<std::size_t>& sizes, bool piecewise_linear,
                                const std::function<double(std::size_t)>& time) {
  std::vector<double> out(sizes.size());
  if (sizes.empty()) return out;
  if (!piecewise_linear || sizes.size() < 3) {
    for (std::size_t i = 0; i < sizes.size(); ++i) out[i] = time(sizes[i]);
    return out;
  }
  auto fill = [&](auto&& self, std::size_t lo, std::size_t hi) -> void {
    if (hi - lo < 2) return;
    const std::size_t mid = lo + (hi - lo) / 2;
    out[mid] = time(sizes[mid]);
    auto chord = [&](std::size_t i) {
      const double t = double(sizes[i] - sizes[lo]) / double(sizes[hi] - sizes[lo]);
      return out[lo] + t * (out[hi] - out[lo]);
    };
    if (std::abs(out[mid] - chord(mid)) <= 1e-12 * std::max(out[mid], 1e-12)) {
      for (std::size_t i = lo + 1; i < hi; ++i) {
        if (i != mid) out[i] = chord(i);
      }
      return;
    }
    self(self, lo, mid);
    self(self, mid, hi);
  };
  out.front() = time(sizes.front());
  out.back() = time(sizes.back());
  fill(fill, 0, sizes.size() - 1);
  return out;
}

// Every bucket size a plan can form: the byte sums of contiguous tensor ranges, sorted.
std::vector<std::size_t> range_sums(const std::vector<std::size_t>& tensor_bytes) {
  std::vector<std::size_t> sums;
  for (std::size_t first = 0; first < tensor_bytes.size(); ++first) {
    std::size_t bytes = 0;
    for (std::size_t last = first; last < tensor_bytes.size(); ++last) {
      bytes += tensor_bytes[last];
      if (bytes > 0) sums.push_back(bytes);
    }
  }
  std::sort(sums.begin(), sums.end());
  sums.erase(std::unique(sums.begin(), sums.end()), sums.end());
  return sums;
}

// The all-reduce price of every contiguous range of a model's tensors under a setup.
class PriceTable {
 public:
  PriceTable(const IterationSetup& setup, const std::vector<std::size_t>& tensor_bytes)
      : sizes_(range_sums(tensor_bytes)) {
    const std::vector<std::string> names = setup.algorithm == "auto"
                                               ? coll::modeled_algorithms()
                                               : std::vector<std::string>{setup.algorithm};
    best_.assign(sizes_.size(), {std::numeric_limits<double>::infinity(), ""});
    for (const auto& name : names) {
      for (const IterationSetup& priced : priced_setups(name, setup)) {
        const coll::Tuning tuning = tuning_of(priced);
        const auto prices = price_sizes(
            sizes_, piecewise_linear(name, priced),
            [&](std::size_t bytes) { return prediction(name, priced, tuning, bytes).total_s(); });
        for (std::size_t i = 0; i < sizes_.size(); ++i) {
          if (prices[i] < best_[i].first) best_[i] = {prices[i], name};
        }
      }
    }
  }
  // Seconds and algorithm for a range's bytes (> 0).
  const std::pair<double, std::string>& operator()(std::size_t bytes) const {
    const auto it = std::lower_bound(sizes_.begin(), sizes_.end(), bytes);
    if (it == sizes_.end() || *it != bytes)
      invalid("no price for a bucket of " + std::to_string(bytes) + " bytes");
    return best_[static_cast<std::size_t>(it - sizes_.begin())];
  }

 private:
  std::vector<std::size_t> sizes_;
  std::vector<std::pair<double, std::string>> best_;
};

std::vector<TensorFlops> flops_of(const ModelTable& table) {
  std::vector<TensorFlops> flops;
  for (const auto& tensor : table.tensors) flops.push_back({tensor.layer, tensor.forward_flops});
  return flops;
}

}  // namespace

std::pair<double, std::string> modelled_allreduce(const IterationSetup& setup, std::size_t bytes) {
  if (setup.algorithm != "auto") return {predicted(setup.algorithm, setup, bytes), setup.algorithm};
  std::pair<double, std::string> best{std::numeric_limits<double>::infinity(), ""};
  for (const auto& name : coll::modeled_algorithms()) {
    const double seconds = predicted(name, setup, bytes);
    if (seconds < best.first) best = {seconds, name};
  }
  return best;
}

ModelledIteration model_iteration(const ModelTable& table, const IterationSetup& setup) {
  if (setup.batch_per_gpu < 1) invalid("batch per GPU must be >= 1");
  ModelledIteration out;
  std::vector<std::string> layers;
  std::vector<std::size_t> tensor_bytes;
  double forward_flops = 0;
  for (const auto& tensor : table.tensors) {
    layers.push_back(tensor.layer);
    tensor_bytes.push_back(tensor.elements * setup.element_bytes);
    forward_flops += tensor.forward_flops;
  }
  const double rate = kP40PeakFlops * kP40SustainedFraction;
  if (setup.compute_profile == "p40") {
    out.profile = p40_profile(flops_of(table), setup.batch_per_gpu);
    out.forward_s = forward_flops * setup.batch_per_gpu / rate;
  } else {  // measured backward times; forward as the same FLOP convention makes it
    out.profile = load_profile_csv(setup.compute_profile, layers);
    out.forward_s = out.profile.total_s() / kBackwardPerForward;
  }
  out.profile = scale_profile(out.profile, setup.compute_scale);
  out.forward_s *= setup.compute_scale;

  // Every bucket is a contiguous range of tensors: price all ranges at once.
  const bool alone = setup.shape.ranks < 2;
  const PriceTable price = alone ? PriceTable(setup, {}) : PriceTable(setup, tensor_bytes);
  const AllreduceCost cost = [&](std::size_t bytes) { return alone ? 0.0 : price(bytes).first; };
  const auto plan = make_plan(parse_policy(setup.fusion), tensor_bytes, out.profile, cost, layers);
  out.fusion = plan.policy;
  out.buckets = plan.buckets;
  const AllreduceLead lead = [&](std::size_t bytes) {
    return alone ? 0.0 : prediction(price(bytes).second, setup, bytes).lead_s;
  };
  out.timeline = setup.overlap ? simulate_wfbp(plan.buckets, out.profile, cost, lead)
                               : simulate_no_overlap(plan.buckets, out.profile, cost, lead);
  IterationSetup unhidden = setup;
  unhidden.params.charging.alpha_overlaps_bytes = false;
  const auto& links = setup.params;
  const double alpha = setup.shape.nodes > 1 ? std::min(links.intra.alpha_s, links.inter.alpha_s)
                                             : links.intra.alpha_s;
  const int g = setup.shape.max_local();
  IterationSetup one_node = setup;
  one_node.shape = model::Shape::uniform(1, g);
  for (const auto& bucket : plan.buckets) {
    double hops = 0;
    if (!alone && bucket.bytes > 0) {
      const auto& [seconds, algorithm] = price(bucket.bytes);
      ++out.algorithm_buckets[algorithm];
      if (alpha > 0) hops = prediction(algorithm, unhidden, bucket.bytes).latency_s / alpha;
      if (algorithm == "hierarchical" && setup.shape.nodes > 1 && g > 1) {
        const double intra_s = predicted("ring", one_node, bucket.bytes);
        out.phase_overlap_s += (g - 1.0) / g * std::min(intra_s, seconds - intra_s);
      }
    }
    out.hops.push_back(hops);
  }
  out.backward_s = out.timeline.backward_s;
  out.comm_s = out.timeline.comm_s;
  out.exposed_s = out.timeline.exposed_s;
  out.iteration_s = out.forward_s + out.timeline.iteration_s;
  return out;
}

}  // namespace coll::study
