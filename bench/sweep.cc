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
#include "progress.hpp"
#include "rank_stats.hpp"
#include "sweep_collective.hpp"

namespace collbench {
namespace {

struct Measurement {
  double time_us = 0;  // mean per call, slowest rank
  double algbw = 0;    // GB/s (1e9 B/s)
  double busbw = 0;
  std::size_t wrong = 0;
};

struct SweepCase {
  coll::Comm& comm;
  const Options& options;
  const std::string& algorithm;
  std::byte* send;
  std::byte* recv;
};

// The busbw column: for all-reduce the algorithm's own bus factor (nccl-tests' 2(n-1)/n unless
// its traffic does not fit that definition) under the communicator's tuning; the default and
// auto, whose algorithm varies with the size, use nccl-tests'. The other collectives use
// nccl-tests' factor for them (SweepCollective::bus_factor).
coll::BusFactor bus_column(coll::Comm& comm, const Options& options, const std::string& algorithm) {
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
Measurement measure(const SweepCase& sweep, std::size_t total, bool in_place) {
  coll::Comm& comm = sweep.comm;
  const Options& options = sweep.options;
  const SweepCollective collective(options.collective, comm, options.type, options.op,
                                   sweep.algorithm);
  const std::byte* input = collective.prepare(sweep.send, sweep.recv, total, in_place);
  auto call = [&] { collective.call(input, sweep.recv, total); };
  for (int i = 0; i < options.warmup; ++i) call();
  comm.barrier();
  const double start = coll::now_seconds();
  for (int i = 0; i < options.iterations; ++i) call();
  const double mean_s = (coll::now_seconds() - start) / options.iterations;

  Measurement result;
  result.time_us = max_over_ranks(comm, mean_s) * 1e6;
  const double bytes = double(total) * double(coll::dtype_size(options.type));
  result.algbw = result.time_us > 0 ? bytes / (result.time_us * 1e-6) / 1e9 : 0;
  result.busbw = result.algbw * bus_column(comm, options, sweep.algorithm).factor;
  if (options.check) {
    input = collective.prepare(sweep.send, sweep.recv, total, in_place);
    call();
    result.wrong = sum_over_ranks(comm, collective.wrong(input, sweep.recv, total));
  }
  return result;
}

std::vector<std::size_t> sweep_counts(coll::Comm& comm, const Options& options) {
  const SweepCollective collective(options.collective, comm, options.type, options.op, "");
  std::vector<std::size_t> counts;
  for (std::size_t bytes = options.min_bytes; bytes <= options.max_bytes;
       bytes *= options.step_factor) {
    counts.push_back(collective.total_count(bytes));
    if (bytes == 0) break;
  }
  return counts;
}

void print_header(const coll::Comm& comm, const Options& options, const std::string& algorithm,
                  const coll::BusFactor& bus) {
  const std::string collective(sweep_kind_name(options.collective));
  std::printf("# collbench %s sweep: %d ranks on %d node(s), algorithm %s\n", collective.c_str(),
              comm.size(), comm.num_nodes(), algorithm.c_str());
  std::printf("# %s\n", comm.describe().c_str());
  std::printf("# iterations %d, warm-up %d, check %s; GB/s = 1e9 B/s\n", options.iterations,
              options.warmup, options.check ? "on" : "off");
  std::printf("# %s\n", bus.definition.c_str());
  const char* bus_name = bus.standard ? "busbw" : "wkbw*";
  std::printf("#%62s%33s\n", "out-of-place", "in-place");
  std::printf("#%11s %12s %8s %6s %10s %7s %7s %6s %10s %7s %7s %6s\n", "size", "count", "type",
              "redop", "time", "algbw", bus_name, "#wrong", "time", "algbw", bus_name, "#wrong");
  std::printf("#%11s %12s %8s %6s %10s %7s %7s %6s %10s %7s %7s %6s\n", "(B)", "(elements)", "", "",
              "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

}  // namespace

std::size_t run_sweep(coll::Comm& comm, const Options& options) {
  const bool lead = comm.rank() == 0;
  coll::BufferPool pool(options.buffers);
  auto send = pool.acquire(options.max_bytes + 64);
  auto recv = pool.acquire(options.max_bytes + 64);
  const auto counts = sweep_counts(comm, options);
  std::vector<std::string> algorithms = options.algorithms;
  if (algorithms.empty()) algorithms.push_back("");  // the library's default
  const std::size_t elem = coll::dtype_size(options.type);

  coll::tools::JsonWriter json;
  json.begin_object()
      .field("tool", "collbench")
      .field("mode", "sweep")
      .field("collective", sweep_kind_name(options.collective))
      .field("ranks", comm.size())
      .field("nodes", comm.num_nodes())
      .field("type", coll::dtype_name(options.type))
      .field("op", coll::op_name(options.op))
      .field("iterations", options.iterations)
      .field("warmup", options.warmup)
      .field("bus_factor", bus_column(comm, options, "").factor)
      .begin_array("results");
  std::size_t total_wrong = 0;
  std::vector<AlgorithmResult> summary;  // out-of-place times per (algorithm, size)
  Progress progress("sweep", counts.size() * algorithms.size(), lead);
  std::size_t done = 0;
  for (const auto& algorithm : algorithms) {
    const std::string label = algorithm.empty() ? "default" : algorithm;
    if (lead) {
      progress.clear();
      print_header(comm, options, label, bus_column(comm, options, algorithm));
    }
    for (const std::size_t count : counts) {
      const SweepCase sweep{comm, options, algorithm, send.data(), recv.data()};
      const Measurement out = measure(sweep, count, false);
      const Measurement in = measure(sweep, count, true);
      total_wrong += out.wrong + in.wrong;
      if (!lead) continue;
      progress.clear();
      std::printf("%12zu %12zu %8s %6s %10.2f %7.2f %7.2f %6zu %10.2f %7.2f %7.2f %6zu\n",
                  count * elem, count, std::string(coll::dtype_name(options.type)).c_str(),
                  std::string(coll::op_name(options.op)).c_str(), out.time_us, out.algbw, out.busbw,
                  out.wrong, in.time_us, in.algbw, in.busbw, in.wrong);
      std::fflush(stdout);
      json.begin_object()
          .field("algorithm", label)
          .field("bytes", count * elem)
          .field("count", count);
      const bool mapped = options.buffers == coll::Sharing::WithPeers;
      AlgorithmResult row{label, count * elem, out.time_us, std::nullopt,
                          comm.resolve_algorithm(algorithm, count * elem, mapped)};
      const auto predicted = options.collective == SweepKind::AllReduce
                                 ? predict_for(comm, algorithm, count * elem, mapped)
                                 : std::nullopt;
      if (predicted) {
        row.predicted_us = predicted->time_us;
        row.predicted_as = predicted->algorithm;
        json.field("predicted_us", predicted->time_us)
            .field("predicted_algorithm", predicted->algorithm);
      }
      summary.push_back(row);
      for (const auto& [name, m] : {std::pair{"out_of_place", out}, std::pair{"in_place", in}}) {
        json.begin_object(name)
            .field("time_us", m.time_us)
            .field("algbw_gbps", m.algbw)
            .field("busbw_gbps", m.busbw)
            .field("wrong", m.wrong)
            .end_object();
      }
      json.end_object();
      progress.update(++done);
    }
  }
  json.end_array();
  if (algorithms.size() > 1) write_algorithm_summary(json, summary);
  json.field("wrong_total", total_wrong).end_object();
  if (lead) {
    progress.clear();
    if (algorithms.size() > 1) print_algorithm_summary(summary);
    std::printf("# Out of bounds values : %zu %s\n", total_wrong,
                total_wrong == 0 ? "OK" : "FAILED");
    if (!options.json_path.empty()) json.save(options.json_path);
  }
  return total_wrong;
}

}  // namespace collbench
