#include "tune.hpp"

#include <algorithm>
#include <cstdio>

#include "coll/buffer_pool.hpp"
#include "coll/clock.hpp"
#include "coll/model/calibration.hpp"
#include "coll/model/decision_table.hpp"
#include "coll/selector.hpp"
#include "coll/tools/json_writer.hpp"
#include "interleaved_rounds.hpp"
#include "rank_stats.hpp"

namespace collbench {
namespace {

// Algorithms measured within this fraction of the fastest are as fast as it: the previous size's
// winner, else the cost model's pick, is kept then, so that noise does not split the table into
// rules that flip at every size.
constexpr double kTolerance = 0.05;

// One size measured out of place or in place.
struct Column {
  std::vector<double> median_us;  // per algorithm, in the order measured
  std::string winner;
  std::string auto_before;  // what `auto` picked before this run (table or model)
};

struct SizeResult {
  std::size_t bytes = 0;
  Column out_of_place, in_place;

  Column& column(bool in_place_column) { return in_place_column ? in_place : out_of_place; }
  const Column& column(bool in_place_column) const {
    return in_place_column ? in_place : out_of_place;
  }
};

// Mean time per call of `algorithm` on the slowest rank, in microseconds (the sweep's timing).
double time_us(coll::Comm& comm, const SweepOptions& options, const std::string& algorithm,
               const std::byte* send, std::byte* recv, std::size_t count) {
  for (int i = 0; i < options.warmup; ++i) {
    comm.allreduce(send, recv, count, options.type, options.op, algorithm);
  }
  comm.barrier();
  const double start = coll::now_seconds();
  for (int i = 0; i < options.iterations; ++i) {
    comm.allreduce(send, recv, count, options.type, options.op, algorithm);
  }
  return max_over_ranks(comm, (coll::now_seconds() - start) / options.iterations) * 1e6;
}

// The fastest, unless one of `preferred` (in order) is within kTolerance of it.
std::string pick_winner(const std::vector<std::string>& algorithms,
                        const std::vector<double>& median_us,
                        const std::vector<std::string>& preferred) {
  std::size_t fastest = 0;
  for (std::size_t a = 0; a < algorithms.size(); ++a) {
    if (median_us[a] < median_us[fastest]) fastest = a;
  }
  for (const auto& name : preferred) {
    const auto at = std::find(algorithms.begin(), algorithms.end(), name);
    if (at == algorithms.end()) continue;
    const std::size_t a = static_cast<std::size_t>(at - algorithms.begin());
    if (median_us[a] <= median_us[fastest] * (1 + kTolerance)) return name;
  }
  return algorithms[fastest];
}

std::vector<std::string> tuned_algorithms(const SweepOptions& options) {
  std::vector<std::string> names;
  for (const auto& name :
       options.algorithms.empty() ? coll::Comm::algorithms() : options.algorithms) {
    if (name != "auto") names.push_back(name);
  }
  return names;
}

}  // namespace

int run_tune(coll::Comm& comm, const SweepOptions& options) {
  const bool lead = comm.rank() == 0;
  const std::string path = coll::model::decision_table_path();
  if (path.empty()) {  // every rank sees the same environment: all of them stop here
    if (lead) {
      std::fprintf(stderr,
                   "collbench: --tune: COLL_TUNING_FILE=none leaves nowhere to write the "
                   "table; set it to a file\n");
    }
    return 1;
  }
  const std::vector<std::string> algorithms = tuned_algorithms(options);
  const int rounds_per_size = options.rounds > 0 ? options.rounds : kDefaultRounds;
  const std::size_t elem = coll::dtype_size(options.type);
  coll::BufferPool pool(options.buffers);
  auto send = pool.acquire(options.max_bytes + 64);
  auto recv = pool.acquire(options.max_bytes + 64);
  const bool mapped = options.buffers == coll::Sharing::WithPeers;
  const coll::Selector& selector = comm.selector();
  const std::string shape = coll::model::shape_key(selector.shape(), mapped);
  const std::string shape_in_place = coll::model::shape_key(selector.shape(), mapped, true);
  const auto rules_key = [&](bool in_place) -> const std::string& {
    return in_place ? shape_in_place : shape;
  };
  if (lead) {
    std::printf(
        "# collbench --tune: shape %s (%s), %zu algorithm(s), %d rounds of %d iterations "
        "(warm-up %d) out of place and in place, medians of the rounds, slowest rank\n",
        shape.c_str(), selector.shape().describe().c_str(), algorithms.size(), rounds_per_size,
        options.iterations, options.warmup);
    std::printf("#%11s", "size (B)");
    for (const auto& name : algorithms) std::printf(" %14.14s", name.c_str());
    std::printf("  %-18s %s\n", "fastest", "auto before");
  }
  std::vector<SizeResult> sizes;
  for (std::size_t bytes = std::max<std::size_t>(options.min_bytes, elem);
       bytes <= options.max_bytes; bytes *= options.step_factor) {
    const std::size_t count = bytes / elem;
    // Both columns of an algorithm in one turn: a phase of load hits them alike.
    std::vector<std::vector<double>> rounds(algorithms.size()), rounds_in_place(algorithms.size());
    interleaved_rounds(rounds_per_size, algorithms.size(), [&](std::size_t a) {
      rounds[a].push_back(time_us(comm, options, algorithms[a], send.data(), recv.data(), count));
      rounds_in_place[a].push_back(
          time_us(comm, options, algorithms[a], recv.data(), recv.data(), count));
    });
    SizeResult result{.bytes = count * elem};
    for (const bool in_place : {false, true}) {
      Column& column = result.column(in_place);
      for (const auto& samples : in_place ? rounds_in_place : rounds) {
        column.median_us.push_back(median(samples));
      }
      column.auto_before = selector.choose(result.bytes, mapped, in_place);
      const std::string model_pick =
          coll::choose(selector.params_for(mapped, in_place), selector.shape(), result.bytes,
                       algorithms, selector.tuning());
      const std::string previous =
          sizes.empty() ? std::string() : sizes.back().column(in_place).winner;
      column.winner = pick_winner(algorithms, column.median_us, {previous, model_pick});
      if (lead) {
        std::printf("%12s", in_place ? "in place" : std::to_string(result.bytes).c_str());
        for (const double us : column.median_us) std::printf(" %14.2f", us);
        std::printf("  %-18s %s\n", column.winner.c_str(), column.auto_before.c_str());
      }
    }
    std::fflush(stdout);
    sizes.push_back(std::move(result));
  }
  if (!lead) return 0;

  auto table = coll::model::load_decision_table(path, coll::Comm::algorithms())
                   .value_or(coll::model::DecisionTable{});
  table.host = coll::model::this_host();
  for (const bool in_place : {false, true}) {
    std::vector<std::pair<std::size_t, std::string>> winners;
    for (const auto& size : sizes) winners.emplace_back(size.bytes, size.column(in_place).winner);
    const std::string& key = rules_key(in_place);
    table.rules[key] = coll::model::rules_from_winners(winners);
    std::printf("# rules for shape %s:", key.c_str());
    for (const auto& rule : table.rules[key]) {
      std::printf(" %zu+ %s;", rule.from_bytes, rule.algorithm.c_str());
    }
    std::printf("\n");
  }
  coll::model::save_decision_table(table, path);
  std::printf(
      "# saved to %s (COLL_TUNING_FILE overrides the path; `auto` reads it when a "
      "communicator first needs it)\n",
      path.c_str());

  if (!options.json_path.empty()) {
    coll::tools::JsonWriter json;
    json.begin_object()
        .field("tool", "collbench")
        .field("mode", "tune")
        .field("shape", shape)
        .field("ranks", comm.size())
        .field("nodes", comm.num_nodes())
        .field("iterations", options.iterations)
        .field("warmup", options.warmup)
        .field("rounds", rounds_per_size)
        .field("table", path)
        .begin_array("results");
    for (const auto& size : sizes) {
      json.begin_object()
          .field("bytes", size.bytes)
          .field("winner", size.out_of_place.winner)
          .field("auto_before", size.out_of_place.auto_before)
          .field("winner_in_place", size.in_place.winner)
          .field("auto_before_in_place", size.in_place.auto_before)
          .begin_array("algorithms");
      for (std::size_t a = 0; a < algorithms.size(); ++a) {
        json.begin_object()
            .field("algorithm", algorithms[a])
            .field("median_us", size.out_of_place.median_us[a])
            .field("median_in_place_us", size.in_place.median_us[a])
            .end_object();
      }
      json.end_array().end_object();
    }
    json.end_array();
    for (const bool in_place : {false, true}) {
      json.begin_array(in_place ? "rules_in_place" : "rules");
      for (const auto& rule : table.rules[rules_key(in_place)]) {
        json.begin_object()
            .field("from_bytes", rule.from_bytes)
            .field("algorithm", rule.algorithm)
            .end_object();
      }
      json.end_array();
    }
    json.end_object();
    json.save(options.json_path);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace collbench
