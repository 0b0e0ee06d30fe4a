// The Open MPI peer of collbench: MPI_Allreduce measured exactly as collbench measures libcoll,
// so that bench/compare.sh can set the two side by side.
//   sweep:  the same sizes (-b/-e/-f), buffers from coll::BufferPool (pre-touched, huge-page
//           advised), the same exact inputs and check, warm-up excluded, a barrier, the mean of
//           -n calls on the slowest rank, out-of-place then in-place (MPI_IN_PLACE); the JSON
//           has collbench --json's sweep fields.
//   replay: --model-gradients M: one MPI_Allreduce per gradient tensor in backward order (as
//           collbench's per-tensor replay), or with --fused one over the flat buffer of all of
//           them; the JSON has collbench's model-gradients fields.
//   --user: as a user's program calls it instead (bench/interposer/compare.py): buffers from a
//           plain mmap (huge pages advised, first touched by the input fill), a barrier before
//           every call and only the call timed; the mean per call of the slowest rank.
//   --alternate K: per size, K blocks of -n back-to-back calls of MPI_Allreduce (libcoll's under
//           the interposer) alternating with K of PMPI_Allreduce (Open MPI's own, which the
//           interposer never takes), out of place, in one process: both meet the same moments of
//           the machine, whose phases decide which of two separate launches looks faster. The
//           JSON has every block's mean per call (slowest rank) and the median of the K ratios of
//           neighbouring blocks; without the interposer both are Open MPI's (ratio about 1).
//           With --against libcoll the other blocks call coll::Comm::allreduce on a communicator
//           of the program's own, as collbench does: the ratio is then the interposer's own cost.
// Run it under mpirun: mpirun -np 4 [--mca pml ob1 --mca btl vader,self] mpi_allreduce ...
// Under LD_PRELOAD=libcoll_mpi.so the same program measures libcoll through the MPI interposer.
#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "coll/buffer_pool.hpp"
#include "coll/comm.hpp"
#include "coll/env.hpp"
#include "coll/tools/json_writer.hpp"
#include "exact_data.hpp"
#include "rank_stats.hpp"
#include "study/model_table.hpp"

namespace {

struct Args {
  std::size_t min_bytes = 8, max_bytes = 32u << 20, step = 2;
  int iterations = 20, warmup = 5;
  std::string json_path, model, variant, models_dir = COLL_MODELS_DIR;
  bool fused = false;
  bool user = false;  // --user: mmap'd buffers, a barrier before each call
  int alternate = 0;  // --alternate K: blocks of MPI_Allreduce and of the other, K of each
  std::string against = "pmpi";  // the other: PMPI_Allreduce, or libcoll called directly
};

std::size_t size_arg(const std::string& text) {
  const auto value = coll::parse_size(text);
  if (!value || *value < 0) throw std::invalid_argument("'" + text + "' is not a size");
  return static_cast<std::size_t>(*value);
}

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--fused" || flag == "--user") {
      (flag == "--fused" ? args.fused : args.user) = true;
      continue;
    }
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "-b")
      args.min_bytes = size_arg(value);
    else if (flag == "-e")
      args.max_bytes = size_arg(value);
    else if (flag == "-f")
      args.step = size_arg(value);
    else if (flag == "-n")
      args.iterations = std::stoi(value);
    else if (flag == "-w")
      args.warmup = std::stoi(value);
    else if (flag == "--json")
      args.json_path = value;
    else if (flag == "--model-gradients")
      args.model = value;
    else if (flag == "--model-variant")
      args.variant = value;
    else if (flag == "--models-dir")
      args.models_dir = value;
    else if (flag == "--alternate")
      args.alternate = std::stoi(value);
    else if (flag == "--against")
      args.against = value;
    else
      throw std::invalid_argument("unknown flag " + flag);
  }
  if (args.step < 2 || args.iterations < 1 || args.warmup < 0 || args.min_bytes > args.max_bytes) {
    throw std::invalid_argument("need -f >= 2, -n >= 1, -w >= 0 and -b <= -e");
  }
  if (args.user && !args.model.empty()) throw std::invalid_argument("--user times sweeps only");
  if (args.alternate < 0 || (args.alternate > 0 && (args.user || !args.model.empty()))) {
    throw std::invalid_argument("--alternate needs K >= 1 and times back-to-back sweeps only");
  }
  if (args.against != "pmpi" && args.against != "libcoll") {
    throw std::invalid_argument("--against takes pmpi or libcoll, not '" + args.against + "'");
  }
  return args;
}

double slowest(double seconds) {
  double out = 0;
  MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

std::size_t total_over_ranks(std::size_t value) {
  unsigned long long in = value, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  return out;
}

struct Measurement {
  double time_us = 0;
  std::size_t wrong = 0;
};

Measurement measure(const Args& args, int rank, int ranks, float* send, float* recv,
                    std::size_t count, bool in_place) {
  auto prepare = [&] {
    collbench::fill_input(coll::DataType::Float32, coll::ReduceOp::Sum, rank,
                          in_place ? recv : send, count);
  };
  auto call = [&] {
    MPI_Allreduce(in_place ? MPI_IN_PLACE : send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  };
  prepare();
  for (int i = 0; i < args.warmup; ++i) call();
  double seconds = 0;
  if (args.user) {
    for (int i = 0; i < args.iterations; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      call();
      seconds += MPI_Wtime() - start;
    }
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < args.iterations; ++i) call();
    seconds = MPI_Wtime() - start;
  }
  Measurement result{slowest(seconds / args.iterations) * 1e6, 0};
  prepare();
  call();
  result.wrong = total_over_ranks(
      collbench::count_wrong(coll::DataType::Float32, coll::ReduceOp::Sum, ranks, recv, count));
  return result;
}

void write_common(coll::tools::JsonWriter& json, const Args& args, int ranks, const char* mode) {
  json.begin_object()
      .field("tool", "mpi_allreduce")
      .field("mode", mode)
      .field("collective", "allreduce")
      .field("ranks", ranks)
      .field("type", "float")
      .field("op", "sum")
      .field("iterations", args.iterations)
      .field("warmup", args.warmup)
      .field("timing", args.user ? "barrier before each call, mmap'd buffers" : "back to back");
}

// K blocks of MPI_Allreduce and of the other contender, alternating, out of place: the means per
// call in µs (slowest rank).
struct Alternation {
  std::vector<double> mpi_us, other_us;
  std::size_t wrong = 0;
  double other_over_mpi() const {  // the median ratio of each block pair: the phases cancel in it
    std::vector<double> ratios;
    for (std::size_t k = 0; k < mpi_us.size(); ++k) ratios.push_back(other_us[k] / mpi_us[k]);
    return collbench::median(ratios);
  }
};

// `direct`: the other contender is this communicator's all-reduce; without it, PMPI_Allreduce.
Alternation alternate(const Args& args, int rank, int ranks, float* send, float* recv,
                      std::size_t count, coll::Comm* direct) {
  collbench::fill_input(coll::DataType::Float32, coll::ReduceOp::Sum, rank, send, count);
  auto through_mpi = [&] {
    MPI_Allreduce(send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  };
  auto other = [&] {
    if (direct) {
      direct->allreduce(send, recv, count, coll::DataType::Float32, coll::ReduceOp::Sum);
    } else {
      PMPI_Allreduce(send, recv, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
  };
  auto block_us = [&](const auto& call, int calls) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < calls; ++i) call();
    return slowest((MPI_Wtime() - start) / calls) * 1e6;
  };
  auto wrong = [&] {
    return total_over_ranks(
        collbench::count_wrong(coll::DataType::Float32, coll::ReduceOp::Sum, ranks, recv, count));
  };
  block_us(through_mpi, args.warmup);
  block_us(other, args.warmup);
  Alternation result;
  for (int k = 0; k < args.alternate; ++k) {
    result.mpi_us.push_back(block_us(through_mpi, args.iterations));
    result.wrong += wrong();
    result.other_us.push_back(block_us(other, args.iterations));
    result.wrong += wrong();
  }
  return result;
}

std::size_t run_alternation(const Args& args, int rank, int ranks) {
  // Collective to make and to destroy: every rank does both, before MPI_Finalize.
  std::unique_ptr<coll::Comm> direct;
  if (args.against == "libcoll") direct = coll::Comm::from_environment();
  coll::BufferPool pool;
  auto send = pool.acquire(args.max_bytes + 64);
  auto recv = pool.acquire(args.max_bytes + 64);
  coll::tools::JsonWriter json;
  write_common(json, args, ranks, "alternate");
  json.field("blocks", args.alternate).field("against", args.against).begin_array("results");
  if (rank == 0) {
    const std::string& name = args.against;
    std::printf("#%11s %12s %12s %12s %12s %14s %6s\n", "size(B)", "mpi med(us)", "mpi min(us)",
                (name + " med(us)").c_str(), (name + " min(us)").c_str(),
                (name + "/mpi pairs").c_str(), "#wrong");
  }
  std::size_t wrong = 0;
  for (std::size_t bytes = args.min_bytes; bytes <= args.max_bytes; bytes *= args.step) {
    const std::size_t count = bytes / sizeof(float);
    const Alternation blocks =
        alternate(args, rank, ranks, reinterpret_cast<float*>(send.data()),
                  reinterpret_cast<float*>(recv.data()), count, direct.get());
    wrong += blocks.wrong;
    const double ratio = blocks.other_over_mpi();
    auto min_of = [](const std::vector<double>& v) {
      return *std::min_element(v.begin(), v.end());
    };
    if (rank == 0) {
      std::printf("%12zu %12.2f %12.2f %12.2f %12.2f %14.3f %6zu\n", count * sizeof(float),
                  collbench::median(blocks.mpi_us), min_of(blocks.mpi_us),
                  collbench::median(blocks.other_us), min_of(blocks.other_us), ratio, blocks.wrong);
    }
    json.begin_object()
        .field("bytes", count * sizeof(float))
        .field("count", count)
        .field(args.against + "_over_mpi_pairs_median", ratio)
        .field("wrong", blocks.wrong);
    for (const auto& [name, times] : {std::pair{std::string("mpi_us"), &blocks.mpi_us},
                                      std::pair{args.against + "_us", &blocks.other_us}}) {
      json.begin_array(name);
      for (const double us : *times) json.element(us);
      json.end_array();
    }
    json.end_object();
    if (bytes == 0) break;
  }
  json.end_array().field("wrong_total", wrong).end_object();
  if (rank == 0 && !args.json_path.empty()) json.save(args.json_path);
  return wrong;
}

// A user's buffer: anonymous memory with huge pages advised, untouched until the input fill.
class MappedBuffer {
 public:
  explicit MappedBuffer(std::size_t bytes) : bytes_(bytes) {
    data_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data_ == MAP_FAILED) throw std::runtime_error("mmap of a buffer failed");
    madvise(data_, bytes_, MADV_HUGEPAGE);  // advice only: without THP the pages stay small
  }
  MappedBuffer(const MappedBuffer&) = delete;
  MappedBuffer& operator=(const MappedBuffer&) = delete;
  ~MappedBuffer() { munmap(data_, bytes_); }
  float* floats() const { return static_cast<float*>(data_); }

 private:
  std::size_t bytes_;
  void* data_;
};

std::size_t run_sweep(const Args& args, int rank, int ranks) {
  coll::BufferPool pool;
  std::optional<coll::BufferPool::Lease> send, recv;
  std::optional<MappedBuffer> user_send, user_recv;
  float* s = nullptr;
  float* r = nullptr;
  if (args.user) {
    s = user_send.emplace(args.max_bytes + 64).floats();
    r = user_recv.emplace(args.max_bytes + 64).floats();
  } else {
    s = reinterpret_cast<float*>(send.emplace(pool.acquire(args.max_bytes + 64)).data());
    r = reinterpret_cast<float*>(recv.emplace(pool.acquire(args.max_bytes + 64)).data());
  }
  const double bus = ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0;
  coll::tools::JsonWriter json;
  write_common(json, args, ranks, "sweep");
  json.field("bus_factor", bus).begin_array("results");
  if (rank == 0)
    std::printf("#%11s %12s %10s %7s %6s %10s %7s %6s\n", "size(B)", "count", "oop(us)", "busbw",
                "#wrong", "ip(us)", "busbw", "#wrong");
  std::size_t wrong = 0;
  for (std::size_t bytes = args.min_bytes; bytes <= args.max_bytes; bytes *= args.step) {
    const std::size_t count = bytes / sizeof(float);
    const Measurement out = measure(args, rank, ranks, s, r, count, false);
    const Measurement in = measure(args, rank, ranks, s, r, count, true);
    wrong += out.wrong + in.wrong;
    const double real_bytes = double(count * sizeof(float));
    auto algbw = [&](const Measurement& m) {
      return m.time_us > 0 ? real_bytes / (m.time_us * 1e-6) / 1e9 : 0.0;
    };
    if (rank == 0) {
      std::printf("%12zu %12zu %10.2f %7.2f %6zu %10.2f %7.2f %6zu\n", count * sizeof(float), count,
                  out.time_us, algbw(out) * bus, out.wrong, in.time_us, algbw(in) * bus, in.wrong);
    }
    json.begin_object()
        .field("algorithm", "MPI_Allreduce")
        .field("bytes", count * sizeof(float))
        .field("count", count);
    for (const auto& [name, m] : {std::pair{"out_of_place", out}, std::pair{"in_place", in}}) {
      json.begin_object(name)
          .field("time_us", m.time_us)
          .field("algbw_gbps", algbw(m))
          .field("busbw_gbps", algbw(m) * bus)
          .field("wrong", m.wrong)
          .end_object();
    }
    json.end_object();
    if (bytes == 0) break;
  }
  json.end_array().field("wrong_total", wrong).end_object();
  if (rank == 0 && !args.json_path.empty()) json.save(args.json_path);
  return wrong;
}

std::size_t run_replay(const Args& args, int rank, int ranks) {
  const auto table = coll::study::load_model_table(args.models_dir, args.model, args.variant);
  const std::vector<std::size_t> offsets = table.flat_offsets();
  const std::size_t total = table.total_elements();
  coll::BufferPool pool;
  auto grads_buffer = pool.acquire(total * sizeof(float) + 64);
  auto reduced_buffer = pool.acquire(total * sizeof(float) + 64);
  auto* grads = reinterpret_cast<float*>(grads_buffer.data());
  auto* reduced = reinterpret_cast<float*>(reduced_buffer.data());
  collbench::fill_input(coll::DataType::Float32, coll::ReduceOp::Sum, rank, grads, total);
  std::vector<double> per_iteration;
  for (int i = 0; i < args.warmup + args.iterations; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (args.fused) {
      MPI_Allreduce(grads, reduced, static_cast<int>(total), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else {
      for (std::size_t k = 0; k < table.tensors.size(); ++k) {
        MPI_Allreduce(grads + offsets[k], reduced + offsets[k],
                      static_cast<int>(table.tensors[k].elements), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      }
    }
    const double seconds = slowest(MPI_Wtime() - start);
    if (i >= args.warmup) per_iteration.push_back(seconds * 1e3);
  }
  const std::size_t wrong = total_over_ranks(
      collbench::count_wrong(coll::DataType::Float32, coll::ReduceOp::Sum, ranks, reduced, total));
  const double med = collbench::median(per_iteration);
  if (rank == 0) {
    std::printf("%s (%s), %zu tensors, %zu bytes, %s: %.3f ms per iteration (median), %zu wrong\n",
                table.model.c_str(), table.variant.c_str(), table.tensors.size(),
                total * sizeof(float), args.fused ? "one flat MPI_Allreduce" : "per tensor", med,
                wrong);
  }
  coll::tools::JsonWriter json;
  write_common(json, args, ranks, "model-gradients");
  json.field("model", table.model)
      .field("variant", table.variant)
      .field("algorithm", "MPI_Allreduce")
      .field("fusion", args.fused ? "flat" : "none")
      .field("tensors", table.tensors.size())
      .field("elements", total)
      .field("bytes", total * sizeof(float))
      .field("median_ms", med)
      .field("wrong", wrong)
      .begin_array("iteration_ms");
  for (const double ms : per_iteration) json.element(ms);
  json.end_array().end_object();
  if (rank == 0 && !args.json_path.empty()) json.save(args.json_path);
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 0;
  try {
    const Args args = parse(argc, argv);
    const std::size_t wrong = !args.model.empty()  ? run_replay(args, rank, ranks)
                              : args.alternate > 0 ? run_alternation(args, rank, ranks)
                                                   : run_sweep(args, rank, ranks);
    status = wrong == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    if (rank == 0) std::fprintf(stderr, "mpi_allreduce: error: %s\n", error.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
