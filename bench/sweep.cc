#include "sweep.hpp"

#include <cstdio>

#include "algorithm_summary.hpp"
#include "coll/algorithms.hpp"
#include "coll/buffer_pool.hpp"
#include "coll/clock.hpp"
#include "coll/env.hpp"
#include "coll/tools/json_writer.hpp"
#include "exact_data.hpp"
#include "explain.hpp"
#include "interleaved_rounds.hpp"
#include "progress.hpp"
#include "rank_stats.hpp"
#include "sweep_collective.hpp"

namespace collbench {
namespace {

// One timed measurement: mean per call on the slowest rank, and the wrong elements it left.
struct Timed {
  double time_us = 0;
  std::size_t wrong = 0;
};

// What a table row reports for one (algorithm, size): the median of its rounds.
struct Measurement {
  double time_us = 0;  // median over the rounds of the mean per call, slowest rank
  double algbw = 0;    // GB/s (1e9 B/s)
  double busbw = 0;
  std::size_t wrong = 0;  // summed over the rounds
};

// Every round of one (algorithm, size).
struct Rounds {
  std::vector<double> out_of_place_us, in_place_us;
  std::size_t wrong_out = 0, wrong_in = 0;
};

struct SweepCase {
  coll::Comm& comm;
  const SweepOptions& options;
  const std::string& algorithm;
  std::byte* send;
  std::byte* recv;
};

// The busbw column: for all-reduce the algorithm's own bus factor (nccl-tests' 2(n-1)/n unless
// its traffic does not fit that definition) under the communicator's tuning; the default and
// auto, whose algorithm varies with the size, use nccl-tests'. The other collectives use
// nccl-tests' factor for them (SweepCollective::bus_factor).
coll::BusFactor bus_column(coll::Comm& comm, const SweepOptions& options,
                           const std::string& algorithm) {
  if (options.collective != SweepKind::AllReduce) {
    const std::string collective(sweep_kind_name(options.collective));
    const bool per_rank = options.collective == SweepKind::AllGather ||
                          options.collective == SweepKind::ReduceScatter;
    return {
        SweepCollective(options.collective, comm, options.type, options.op, algorithm).bus_factor(),
        true,
        std::string("busbw = algbw * ") + (per_rank ? "(n-1)/n" : "1") + " (nccl-tests' " +
            collective + ")" + (per_rank ? "; size = the whole vector, size/n per rank" : "")};
  }
  return coll::bus_factor(algorithm, comm.size(), comm.tuning());
}

// `total` elements of the swept vector (see SweepCollective for what each collective moves).
Timed measure(const SweepCase& sweep, std::size_t total, bool in_place) {
  coll::Comm& comm = sweep.comm;
  const SweepOptions& options = sweep.options;
  const SweepCollective collective(options.collective, comm, options.type, options.op,
                                   sweep.algorithm);
  const std::byte* input = collective.prepare(sweep.send, sweep.recv, total, in_place);
  auto call = [&] { collective.call(input, sweep.recv, total); };
  for (int i = 0; i < options.warmup; ++i) call();
  comm.barrier();
  const double start = coll::now_seconds();
  for (int i = 0; i < options.iterations; ++i) call();
  const double mean_s = (coll::now_seconds() - start) / options.iterations;

  Timed result{max_over_ranks(comm, mean_s) * 1e6, 0};
  if (options.check) {
    input = collective.prepare(sweep.send, sweep.recv, total, in_place);
    call();
    result.wrong = sum_over_ranks(comm, collective.wrong(input, sweep.recv, total));
  }
  return result;
}

Measurement reported(const SweepOptions& options, const coll::BusFactor& bus, std::size_t total,
                     const std::vector<double>& rounds_us, std::size_t wrong) {
  Measurement result;
  result.time_us = median(rounds_us);
  const double bytes = double(total) * double(coll::dtype_size(options.type));
  result.algbw = result.time_us > 0 ? bytes / (result.time_us * 1e-6) / 1e9 : 0;
  result.busbw = result.algbw * bus.factor;
  result.wrong = wrong;
  return result;
}

std::vector<std::size_t> sweep_counts(coll::Comm& comm, const SweepOptions& options) {
  const SweepCollective collective(options.collective, comm, options.type, options.op, "");
  std::vector<std::size_t> counts;
  for (std::size_t bytes = options.min_bytes; bytes <= options.max_bytes;
       bytes *= options.step_factor) {
    counts.push_back(collective.total_count(bytes));
    if (bytes == 0) break;
  }
  return counts;
}

void print_header(const coll::Comm& comm, const SweepOptions& options, const std::string& algorithm,
                  const coll::BusFactor& bus, int rounds) {
  const std::string collective(sweep_kind_name(options.collective));
  std::printf("# collbench %s sweep: %d ranks on %d node(s), algorithm %s\n", collective.c_str(),
              comm.size(), comm.num_nodes(), algorithm.c_str());
  std::printf("# %s\n", comm.describe().c_str());
  std::printf("# iterations %d, warm-up %d, %s, check %s; GB/s = 1e9 B/s\n", options.iterations,
              options.warmup,
              rounds == 1 ? "1 round" : (std::to_string(rounds) + " rounds, medians").c_str(),
              options.check ? "on" : "off");
  std::printf("# %s\n", bus.definition.c_str());
  const char* bus_name = bus.standard ? "busbw" : "wkbw*";
  std::printf("#%62s%33s\n", "out-of-place", "in-place");
  std::printf("#%11s %12s %8s %6s %10s %7s %7s %6s %10s %7s %7s %6s\n", "size", "count", "type",
              "redop", "time", "algbw", bus_name, "#wrong", "time", "algbw", bus_name, "#wrong");
  std::printf("#%11s %12s %8s %6s %10s %7s %7s %6s %10s %7s %7s %6s\n", "(B)", "(elements)", "", "",
              "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

// Prints and records the rows: each algorithm's table (nccl-tests' layout), the JSON results and
// the rows of the summary across algorithms.
class SweepReport {
 public:
  SweepReport(coll::Comm& comm, const SweepOptions& options, int rounds)
      : comm_(comm), options_(options), rounds_(rounds), lead_(comm.rank() == 0) {
    json_.begin_object()
        .field("tool", "collbench")
        .field("mode", "sweep")
        .field("collective", sweep_kind_name(options.collective))
        .field("ranks", comm.size())
        .field("nodes", comm.num_nodes())
        .field("type", coll::dtype_name(options.type))
        .field("op", coll::op_name(options.op))
        .field("iterations", options.iterations)
        .field("warmup", options.warmup)
        .field("rounds", rounds)
        .field("bus_factor", bus_column(comm, options, "").factor)
        .begin_array("results");
  }

  // The row of `algorithm` ("" for the library's default) at `count` elements, after the table's
  // header when it is the algorithm's first.
  void row(const std::string& algorithm, std::size_t count, const Rounds& rounds, bool first) {
    total_wrong_ += rounds.wrong_out + rounds.wrong_in;
    if (!lead_) return;
    const std::string label = algorithm.empty() ? "default" : algorithm;
    const coll::BusFactor bus = bus_column(comm_, options_, algorithm);
    if (first) print_header(comm_, options_, label, bus, rounds_);
    const Measurement out =
        reported(options_, bus, count, rounds.out_of_place_us, rounds.wrong_out);
    const Measurement in = reported(options_, bus, count, rounds.in_place_us, rounds.wrong_in);
    const std::size_t bytes = count * coll::dtype_size(options_.type);
    std::printf("%12zu %12zu %8s %6s %10.2f %7.2f %7.2f %6zu %10.2f %7.2f %7.2f %6zu\n", bytes,
                count, std::string(coll::dtype_name(options_.type)).c_str(),
                std::string(coll::op_name(options_.op)).c_str(), out.time_us, out.algbw, out.busbw,
                out.wrong, in.time_us, in.algbw, in.busbw, in.wrong);
    std::fflush(stdout);
    const bool mapped = options_.buffers == coll::Sharing::WithPeers;
    const std::string ran = comm_.resolve_algorithm(algorithm, bytes, mapped);
    const std::string ran_in_place = comm_.resolve_algorithm(algorithm, bytes, mapped, true);
    json_.begin_object()
        .field("algorithm", label)
        .field("bytes", bytes)
        .field("count", count)
        .field("ran", ran)
        .field("ran_in_place", ran_in_place)
        .field("busbw_standard", bus.standard);  // false: the column is wkbw* (bus.definition)
    AlgorithmResult summary_row{.algorithm = label,
                                .bytes = bytes,
                                .time_us = out.time_us,
                                .predicted_as = ran,
                                .in_place_us = in.time_us,
                                .ran_in_place = ran_in_place};
    const auto predicted = options_.collective == SweepKind::AllReduce
                               ? predict_for(comm_, algorithm, bytes, mapped)
                               : std::nullopt;
    if (predicted) {
      summary_row.predicted_us = predicted->time_us;
      json_.field("predicted_us", predicted->time_us)
          .field("predicted_algorithm", predicted->algorithm);
    }
    summary_.push_back(summary_row);
    for (const auto& [name, m] : {std::pair{"out_of_place", out}, std::pair{"in_place", in}}) {
      json_.begin_object(name)
          .field("time_us", m.time_us)
          .field("algbw_gbps", m.algbw)
          .field("busbw_gbps", m.busbw)
          .field("wrong", m.wrong)
          .end_object();
    }
    json_.end_object();
  }

  // The summary across algorithms (when there are several), the verdict line and the JSON file.
  std::size_t finish(std::size_t algorithms) {
    json_.end_array();
    if (algorithms > 1) write_algorithm_summary(json_, summary_);
    json_.field("wrong_total", total_wrong_).end_object();
    if (lead_) {
      if (algorithms > 1) print_algorithm_summary(summary_);
      std::printf("# Out of bounds values : %zu %s\n", total_wrong_,
                  total_wrong_ == 0 ? "OK" : "FAILED");
      if (!options_.json_path.empty()) json_.save(options_.json_path);
    }
    return total_wrong_;
  }

 private:
  coll::Comm& comm_;
  const SweepOptions& options_;
  const int rounds_;
  const bool lead_;
  coll::tools::JsonWriter json_;
  std::vector<AlgorithmResult> summary_;  // medians per (algorithm, size)
  std::size_t total_wrong_ = 0;
};

}  // namespace

// Sizes are measured in order, and at each size every algorithm in interleaved rounds
// (interleaved_rounds.hpp): a phase of load on this machine then hits every algorithm of a size
// alike, where measuring one algorithm's whole sweep after another's would compare times
// taken minutes apart. One algorithm prints its rows as they come; several print their tables
// once every size is measured.
std::size_t run_sweep(coll::Comm& comm, const SweepOptions& options) {
  coll::BufferPool pool(options.buffers);
  auto send = pool.acquire(options.max_bytes + 64);
  auto recv = pool.acquire(options.max_bytes + 64);
  const auto counts = sweep_counts(comm, options);
  std::vector<std::string> algorithms = options.algorithms;
  if (algorithms.empty()) algorithms.push_back("");  // the library's default
  const std::size_t n = algorithms.size();
  const int rounds = options.rounds > 0 ? options.rounds : n > 1 ? kDefaultRounds : 1;

  SweepReport report(comm, options, rounds);
  std::vector<std::vector<Rounds>> measured(n, std::vector<Rounds>(counts.size()));
  Progress progress("sweep", counts.size() * n * static_cast<std::size_t>(rounds),
                    comm.rank() == 0);
  std::size_t done = 0;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    interleaved_rounds(rounds, n, [&](std::size_t a) {
      const SweepCase sweep{comm, options, algorithms[a], send.data(), recv.data()};
      Rounds& cell = measured[a][s];
      const Timed out = measure(sweep, counts[s], false);
      const Timed in = measure(sweep, counts[s], true);
      cell.out_of_place_us.push_back(out.time_us);
      cell.in_place_us.push_back(in.time_us);
      cell.wrong_out += out.wrong;
      cell.wrong_in += in.wrong;
      progress.update(++done);
    });
    if (n == 1) {
      progress.clear();
      report.row(algorithms[0], counts[s], measured[0][s], s == 0);
    }
  }
  progress.clear();
  if (n > 1) {
    for (std::size_t a = 0; a < n; ++a) {
      for (std::size_t s = 0; s < counts.size(); ++s) {
        report.row(algorithms[a], counts[s], measured[a][s], s == 0);
      }
    }
  }
  return report.finish(n);
}

}  // namespace collbench
