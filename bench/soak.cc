#include "soak.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "coll/clock.hpp"
#include "coll/tools/json_writer.hpp"
#include "exact_data.hpp"
#include "guarded_buffer.hpp"
#include "rank_stats.hpp"
#include "soak_plan.hpp"
#include "sweep_collective.hpp"

namespace collbench {
namespace {

constexpr std::size_t kSamples = 20;          // RSS samples over the run
constexpr std::size_t kReportedPerRank = 10;  // failing operations printed by each rank
constexpr double kRssGrowthFloorMiB = 16;     // allowed RSS growth (allocator noise) ...
constexpr double kRssGrowthFraction = 0.10;   // ... or this fraction of the baseline if more

struct Problems {
  std::size_t wrong = 0;   // elements that differ from the exact result
  std::size_t guards = 0;  // buffers whose guard bytes were overwritten
  std::size_t inputs = 0;  // out-of-place inputs the call modified
  std::size_t total() const { return wrong + guards + inputs; }
  Problems& operator+=(const Problems& other) {
    wrong += other.wrong;
    guards += other.guards;
    inputs += other.inputs;
    return *this;
  }
};

double resident_mib() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(::sysconf(_SC_PAGESIZE)) / (1 << 20);
}

// Tags of queued and fused calls: distinct per call, so misordered queues would be caught.
std::uint64_t call_tag(const SoakOp& op, std::size_t call) {
  return op.index * 8 + call + 1;
}

// A call's buffers, exactly as large as the call uses them, so a write past the end hits a
// guard: all-gather sends one block, reduce-scatter out of place receives one.
struct CallBuffers {
  GuardedBuffer send, recv;
  std::vector<std::byte> input_copy;  // out of place: the input as written, to compare after
  const std::byte* input = nullptr;
};

CallBuffers prepare(const SweepCollective& collective, const SoakCall& call, int ranks) {
  const std::size_t elem = coll::dtype_size(call.type);
  const std::size_t block = call.count / std::size_t(ranks);
  const std::size_t send_count = call.in_place                       ? 0
                                 : call.kind == SweepKind::AllGather ? block
                                                                     : call.count;
  const std::size_t recv_count =
      call.kind == SweepKind::ReduceScatter && !call.in_place ? block : call.count;
  CallBuffers buffers{GuardedBuffer(send_count * elem), GuardedBuffer(recv_count * elem), {}, {}};
  buffers.input =
      collective.prepare(buffers.send.data(), buffers.recv.data(), call.count, call.in_place);
  if (!call.in_place) {
    buffers.input_copy.assign(buffers.send.data(), buffers.send.data() + buffers.send.bytes());
  }
  return buffers;
}

Problems check(const SweepCollective& collective, const SoakCall& call,
               const CallBuffers& buffers) {
  Problems found;
  found.wrong = collective.wrong(buffers.input, buffers.recv.data(), call.count);
  found.guards = std::size_t(!buffers.send.intact()) + std::size_t(!buffers.recv.intact());
  found.inputs =
      !call.in_place && !buffers.input_copy.empty() &&
      std::memcmp(buffers.input_copy.data(), buffers.send.data(), buffers.input_copy.size()) != 0;
  return found;
}

// Waits for every request, even after one failed (their buffers must outlive them), then
// rethrows the first failure.
void wait_all(std::vector<coll::Request>& requests) {
  std::exception_ptr first_failure;
  for (auto& request : requests) {
    try {
      request.wait();
    } catch (...) {
      if (!first_failure) first_failure = std::current_exception();
    }
  }
  if (first_failure) std::rethrow_exception(first_failure);
}

Problems run_fused(coll::Comm& comm, const SoakOp& op) {
  const SoakCall& first_call = op.calls.front();
  const std::size_t elem = coll::dtype_size(first_call.type);
  std::vector<GuardedBuffer> storage;
  storage.reserve(op.calls.size());
  std::vector<coll::Tensor> tensors;
  std::size_t first = 0;
  for (const auto& call : op.calls) {
    storage.emplace_back(call.count * elem);
    fill_input(call.type, call.op, comm.rank(), storage.back().data(), call.count, first);
    tensors.push_back({storage.back().data(), call.count, call.type});
    first += call.count;
  }
  comm.allreduce_fused_async(tensors, first_call.op, first_call.algorithm, call_tag(op, 0)).wait();
  Problems found;
  first = 0;
  for (std::size_t i = 0; i < op.calls.size(); ++i) {
    const SoakCall& call = op.calls[i];
    found.wrong +=
        count_wrong(call.type, call.op, comm.size(), storage[i].data(), call.count, first);
    found.guards += !storage[i].intact();
    first += call.count;
  }
  return found;
}

Problems run_op(coll::Comm& comm, const SoakOp& op) {
  if (op.mode == SoakMode::Fused) return run_fused(comm, op);
  std::vector<SweepCollective> collectives;
  std::vector<CallBuffers> buffers;
  for (const auto& call : op.calls) {
    collectives.emplace_back(call.kind, comm, call.type, call.op, call.algorithm);
    buffers.push_back(prepare(collectives.back(), call, comm.size()));
  }
  if (op.mode == SoakMode::Blocking) {
    collectives[0].call(buffers[0].input, buffers[0].recv.data(), op.calls[0].count);
  } else {
    std::vector<coll::Request> requests;
    const std::size_t queued = op.calls.size() - (op.blocking_tail ? 1 : 0);
    for (std::size_t i = 0; i < queued; ++i) {
      const SoakCall& call = op.calls[i];
      requests.push_back(comm.allreduce_async(buffers[i].input, buffers[i].recv.data(), call.count,
                                              call.type, call.op, call.algorithm, call_tag(op, i)));
    }
    try {
      if (op.blocking_tail) {
        collectives.back().call(buffers.back().input, buffers.back().recv.data(),
                                op.calls.back().count);
      }
    } catch (...) {
      wait_all(requests);
      throw;
    }
    wait_all(requests);
  }
  Problems found;
  for (std::size_t i = 0; i < op.calls.size(); ++i) {
    found += check(collectives[i], op.calls[i], buffers[i]);
  }
  return found;
}

std::vector<std::string> soak_algorithms(const SweepOptions& sweep) {
  if (!sweep.algorithms.empty()) return sweep.algorithms;
  auto algorithms = coll::Comm::algorithms();
  algorithms.push_back("auto");
  algorithms.push_back("");  // the communicator's default
  return algorithms;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names)
    text += (text.empty() ? "" : ",") + (name.empty() ? "default" : name);
  return text;
}

struct Sample {
  std::size_t ops = 0;    // operations done
  std::size_t calls = 0;  // collective calls done
  double rss_mib = 0;     // the largest over ranks
  std::size_t problems = 0;
  double elapsed_s = 0;
};

// The largest RSS sampled over operations (from, to].
double largest_rss(const std::vector<Sample>& samples, std::size_t from, std::size_t to) {
  double largest = 0;
  for (const auto& sample : samples) {
    if (sample.ops > from && sample.ops <= to) largest = std::max(largest, sample.rss_mib);
  }
  return largest;
}

}  // namespace

std::size_t run_soak(coll::Comm& comm, const SoakOptions& soak, const SweepOptions& sweep) {
  const bool lead = comm.rank() == 0;
  std::uint64_t seed = soak.seed ? *soak.seed : std::random_device()();
  comm.broadcast(&seed, &seed, 1, coll::DataType::Uint64, 0);  // rank 0's draw, when not given
  const auto algorithms = soak_algorithms(sweep);
  const SoakPlan plan(seed, comm.size(), sweep.max_bytes, algorithms);
  const std::size_t ops = soak.ops;
  const std::size_t interval = (ops + kSamples - 1) / kSamples;
  const std::string rerun = "rerun with --seed " + std::to_string(seed) + " on the same ranks";
  if (lead) {
    std::printf("# collbench soak: %zu operations on %d ranks (%d node(s)), seed %llu\n", ops,
                comm.size(), comm.num_nodes(), static_cast<unsigned long long>(seed));
    std::printf("# algorithms %s; at most %zu bytes per call; every result checked exactly\n",
                joined(algorithms).c_str(), sweep.max_bytes);
    std::printf("# %10s %10s %12s %10s %10s\n", "ops", "calls", "rss MiB max", "problems",
                "time (s)");
    std::fflush(stdout);
  }

  Problems found;
  std::size_t calls = 0, reported = 0;
  std::vector<Sample> samples;
  const double start = coll::now_seconds();
  for (std::size_t i = 0; i < ops; ++i) {
    const SoakOp op = plan.op(i);
    Problems problems;
    try {
      problems = run_op(comm, op);
    } catch (const coll::Error&) {
      // The library's error stays the last line: the launcher's summary quotes it.
      std::fprintf(stderr, "collbench: soak: rank %d failed in %s\n  %s --soak %zu\n", comm.rank(),
                   describe(op).c_str(), rerun.c_str(), i + 1);
      throw;
    }
    calls += op.calls.size();
    found += problems;
    if (problems.total() != 0 && reported++ < kReportedPerRank) {
      std::fprintf(stderr,
                   "collbench: soak: rank %d: %s\n  %zu wrong elements, %zu overwritten guards, "
                   "%zu modified inputs; %s --soak %zu\n",
                   comm.rank(), describe(op).c_str(), problems.wrong, problems.guards,
                   problems.inputs, rerun.c_str(), i + 1);
    }
    if ((i + 1) % interval != 0 && i + 1 != ops) continue;
    Sample sample{i + 1, calls, max_over_ranks(comm, resident_mib()),
                  sum_over_ranks(comm, found.total()), coll::now_seconds() - start};
    samples.push_back(sample);
    if (lead) {
      std::printf("  %10zu %10zu %12.1f %10zu %10.1f\n", sample.ops, sample.calls, sample.rss_mib,
                  sample.problems, sample.elapsed_s);
      std::fflush(stdout);
    }
  }

  const Problems total{sum_over_ranks(comm, found.wrong), sum_over_ranks(comm, found.guards),
                       sum_over_ranks(comm, found.inputs)};
  // Growth from the first quarter of the run to the last: pools and caches fill early, so a
  // resident size still climbing at the end is a leak.
  const double first_quarter = largest_rss(samples, 0, std::max<std::size_t>(ops / 4, interval));
  const double last_quarter =
      largest_rss(samples, ops - std::min(ops, std::max(ops / 4, interval)), ops);
  const double growth = last_quarter - first_quarter;
  const double allowed = std::max(kRssGrowthFloorMiB, kRssGrowthFraction * first_quarter);
  const bool rss_ok = growth <= allowed;
  const bool pass = total.total() == 0 && rss_ok;
  if (lead) {
    std::printf(
        "# soak: %zu operations (%zu collective calls) in %.1f s: %zu wrong elements, %zu "
        "overwritten guards, %zu modified inputs\n",
        ops, calls, coll::now_seconds() - start, total.wrong, total.guards, total.inputs);
    std::printf(
        "# soak: RSS (largest rank) %.1f MiB in the first quarter, %.1f MiB in the last "
        "(%+.1f MiB, allowed %.1f): %s\n",
        first_quarter, last_quarter, growth, allowed, rss_ok ? "plateau" : "GROWING");
    std::printf("# soak: %s (seed %llu)\n", pass ? "PASS" : "FAIL",
                static_cast<unsigned long long>(seed));
    std::fflush(stdout);
  }
  if (lead && !sweep.json_path.empty()) {
    coll::tools::JsonWriter json;
    json.begin_object()
        .field("tool", "collbench")
        .field("mode", "soak")
        .field("ranks", comm.size())
        .field("nodes", comm.num_nodes())
        .field("seed", std::to_string(seed))
        .field("ops", ops)
        .field("calls", calls)
        .field("max_bytes", sweep.max_bytes)
        .field("algorithms", joined(algorithms))
        .begin_array("samples");
    for (const auto& sample : samples) {
      json.begin_object()
          .field("ops", sample.ops)
          .field("calls", sample.calls)
          .field("rss_mib_max", sample.rss_mib)
          .field("problems", sample.problems)
          .field("elapsed_s", sample.elapsed_s)
          .end_object();
    }
    json.end_array()
        .field("wrong", total.wrong)
        .field("overwritten_guards", total.guards)
        .field("modified_inputs", total.inputs)
        .field("rss_first_quarter_mib", first_quarter)
        .field("rss_last_quarter_mib", last_quarter)
        .field("rss_growth_mib", growth)
        .field("rss_growth_allowed_mib", allowed)
        .field("verdict", pass ? "pass" : "fail")
        .end_object();
    json.save(sweep.json_path);
  }
  return total.total() + (rss_ok ? 0 : 1);
}

}  // namespace collbench
