// A rank process for the integration tests, started by the launcher (or mpirun). Its first
// argument picks a behaviour:
//   check ALGO COUNT...   every dtype and op, in and out of place, bit-exact against exact_data
//   check-shared ALGO COUNT...       the same with buffers from coll::allocate_shared
//   check-shared-even ALGO COUNT...  the same, shared on even ranks only
//   die RANK AFTER        RANK kills itself (SIGKILL) after AFTER all-reduces; others continue
//   stall RANK AFTER      RANK stops answering (sleeps) after AFTER all-reduces
//   stop RANK AFTER       RANK stops its process (SIGSTOP) after AFTER all-reduces, first printing
//                         "rank_program: rank RANK stops at T" (T: steady-clock seconds)
//   late RANK SECONDS     RANK joins the job SECONDS late
//   mismatch [ALGO]       rank 1 passes a different count (ALGO: default auto)
//   in-place-odd          odd ranks reduce in place, even ones out of place (auto)
//   stop-at-end RANK      RANK stops its process (SIGSTOP) after the job's only all-reduce
//   barrier-mismatch [ALGO]  rank 1 calls barrier(), the others a one-byte max all-reduce on ALGO
//                         (default ring)
//   huge-count            every collective with a count whose byte size overflows must be refused
//                         up front (InvalidArgument), leaving the communicator usable
//   async                 queues many all-reduces while "computing", waits, checks each
//   misordered            rank 1 queues two equal-size tensors in the other order
//   fused                 scattered tensors (of each type) in one fused all-reduce, checked
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "coll/buffer_pool.hpp"
#include "coll/clock.hpp"
#include "coll/comm.hpp"
#include "exact_data.hpp"

namespace {

using coll::DataType;
using coll::ReduceOp;

std::size_t check_all(coll::Comm& comm, const std::string& algorithm,
                      const std::vector<std::size_t>& counts, coll::Sharing sharing) {
  coll::BufferPool pool(sharing);
  std::size_t largest = 1;
  for (std::size_t c : counts) largest = std::max(largest, c);
  auto send = pool.acquire(largest * 8);
  auto recv = pool.acquire(largest * 8);
  std::size_t wrong = 0;
  for (int t = 0; t < coll::kNumDataTypes; ++t) {
    for (int o = 0; o < coll::kNumReduceOps; ++o) {
      const auto type = static_cast<DataType>(t);
      const auto op = static_cast<ReduceOp>(o);
      for (std::size_t count : counts) {
        // The largest count runs for sums only: every op is covered at the smaller counts.
        if (count == largest && largest > 64 && op != ReduceOp::Sum) continue;
        for (bool in_place : {false, true}) {
          std::byte* input = in_place ? recv.data() : send.data();
          collbench::fill_input(type, op, comm.rank(), input, count);
          comm.allreduce(input, recv.data(), count, type, op, algorithm);
          const std::size_t bad = collbench::count_wrong(type, op, comm.size(), recv.data(), count);
          if (bad != 0) {
            std::fprintf(stderr, "rank %d: %s %s count %zu %s: %zu wrong\n", comm.rank(),
                         std::string(coll::dtype_name(type)).c_str(),
                         std::string(coll::op_name(op)).c_str(), count,
                         in_place ? "in place" : "out of place", bad);
          }
          wrong += bad;
        }
      }
    }
  }
  return wrong;
}

void loop_until(coll::Comm& comm, int victim, int after, void (*act)()) {
  std::vector<float> data(1 << 16, 1.0f);
  for (int i = 0; i < 100000; ++i) {
    if (comm.rank() == victim && i == after) act();
    comm.allreduce(data.data(), data.data(), data.size(), DataType::Float32, ReduceOp::Max);
  }
}

// Tensors of assorted sizes queued one by one with a little "compute" in between, as backward
// produces gradients; then a blocking call, which must queue behind them.
std::size_t check_async(coll::Comm& comm) {
  coll::BufferPool pool;
  std::vector<std::size_t> counts;
  for (std::size_t i = 0; i < 40; ++i) counts.push_back((i * 7919) % 70001 + (i % 5 == 0 ? 0 : 1));
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  auto send = pool.acquire(total * sizeof(float) + 64);
  auto recv = pool.acquire(total * sizeof(float) + 64);
  auto* in = reinterpret_cast<float*>(send.data());
  auto* out = reinterpret_cast<float*>(recv.data());
  collbench::fill_input(DataType::Float32, ReduceOp::Sum, comm.rank(), in, total);
  std::vector<coll::Request> requests;
  std::size_t offset = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    requests.push_back(comm.allreduce_async(in + offset, out + offset, counts[i], DataType::Float32,
                                            ReduceOp::Sum, {}, i + 1));
    offset += counts[i];
    ::usleep(200);  // the next layer's backward
  }
  float scalar = 1.0f;
  comm.allreduce(&scalar, &scalar, 1, DataType::Float32, ReduceOp::Sum);
  for (auto& request : requests) request.wait();
  std::size_t wrong = scalar == float(comm.size()) ? 0 : 1;
  return wrong + collbench::count_wrong(DataType::Float32, ReduceOp::Sum, comm.size(), out, total);
}

// Tensors in separate allocations, zero-size ones included, fused into one all-reduce.
std::size_t check_fused(coll::Comm& comm) {
  std::size_t wrong = 0;
  for (int t = 0; t < coll::kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    const std::size_t elem = coll::dtype_size(type);
    std::vector<std::vector<std::byte>> storage;
    std::vector<coll::Tensor> tensors;
    for (std::size_t count :
         {std::size_t{7}, std::size_t{0}, std::size_t{1000}, std::size_t{1}, std::size_t{65537}}) {
      storage.emplace_back(count * elem + 1);
    }
    std::size_t first = 0;
    for (auto& bytes : storage) {
      const std::size_t count = (bytes.size() - 1) / elem;
      collbench::fill_input(type, ReduceOp::Sum, comm.rank(), bytes.data(), count, first);
      tensors.push_back({bytes.data(), count, type});
      first += count;
    }
    comm.allreduce_fused_async(tensors, ReduceOp::Sum, {}, std::uint64_t(t) + 1).wait();
    first = 0;
    for (const auto& tensor : tensors) {
      wrong += collbench::count_wrong(type, ReduceOp::Sum, comm.size(), tensor.data, tensor.count,
                                      first);
      first += tensor.count;
    }
  }
  return wrong;
}

void queue_misordered(coll::Comm& comm) {
  std::vector<float> a(1000, 1.0f), b(1000, 2.0f);
  const bool swap = comm.rank() == 1;
  auto first = comm.allreduce_async(swap ? b.data() : a.data(), swap ? b.data() : a.data(), 1000,
                                    DataType::Float32, ReduceOp::Sum, {}, swap ? 2 : 1);
  auto second = comm.allreduce_async(swap ? a.data() : b.data(), swap ? a.data() : b.data(), 1000,
                                     DataType::Float32, ReduceOp::Sum, {}, swap ? 1 : 2);
  first.wait();
  second.wait();
}

void refuse_huge_counts(coll::Comm& comm) {
  float data[4] = {1, 1, 1, 1};
  const std::size_t huge = SIZE_MAX / 2;  // x 4 bytes overflows size_t
  const std::size_t per_rank = SIZE_MAX / 8 / static_cast<std::size_t>(comm.size()) + 1;
  const std::vector<std::pair<const char*, std::function<void()>>> calls = {
      {"allreduce", [&] { comm.allreduce(data, data, huge, DataType::Float32, ReduceOp::Sum); }},
      {"allreduce_async",
       [&] { comm.allreduce_async(data, data, huge, DataType::Float32, ReduceOp::Sum).wait(); }},
      {"broadcast", [&] { comm.broadcast(data, data, huge, DataType::Float32, 0); }},
      {"reduce", [&] { comm.reduce(data, data, huge, DataType::Float32, ReduceOp::Sum, 0); }},
      {"allgather", [&] { comm.allgather(data, data, per_rank, DataType::Float64); }},
      {"reduce_scatter",
       [&] { comm.reduce_scatter(data, data, per_rank, DataType::Float64, ReduceOp::Sum); }},
  };
  for (const auto& [name, call] : calls) {
    try {
      call();
      std::fprintf(stderr, "rank_program: rank %d: %s of a huge count was accepted\n", comm.rank(),
                   name);
      std::exit(1);
    } catch (const coll::Error& error) {
      if (error.status() != coll::Status::InvalidArgument) throw;
    }
  }
  comm.allreduce(data, data, 4, DataType::Float32, ReduceOp::Sum);
  if (data[0] != float(comm.size())) std::exit(1);
  std::printf("rank %d: huge counts refused, communicator still works\n", comm.rank());
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fprintf(stderr, "rank_program: which behaviour?\n");
    return 2;
  }
  try {
    const std::string& mode = args[0];
    if (mode == "late" && std::atoi(std::getenv("COLL_RANK")) == std::stoi(args.at(1))) {
      ::sleep(static_cast<unsigned>(std::stoi(args.at(2))));
    }
    auto comm = coll::Comm::from_environment();
    if (mode == "check" || mode == "check-shared" || mode == "check-shared-even") {
      std::vector<std::size_t> counts;
      for (std::size_t i = 2; i < args.size(); ++i) counts.push_back(std::stoull(args[i]));
      const bool shared =
          mode == "check-shared" || (mode == "check-shared-even" && comm->rank() % 2 == 0);
      const std::size_t wrong = check_all(
          *comm, args.at(1), counts, shared ? coll::Sharing::WithPeers : coll::Sharing::Private);
      if (comm->rank() == 0) std::printf("wrong %zu\n", wrong);
      return wrong == 0 ? 0 : 1;
    }
    if (mode == "async") {
      const std::size_t wrong = check_async(*comm);
      if (comm->rank() == 0) std::printf("wrong %zu\n", wrong);
      return wrong == 0 ? 0 : 1;
    }
    if (mode == "fused") {
      const std::size_t wrong = check_fused(*comm);
      if (comm->rank() == 0) std::printf("wrong %zu\n", wrong);
      return wrong == 0 ? 0 : 1;
    }
    if (mode == "misordered") queue_misordered(*comm);
    if (mode == "die") {
      loop_until(*comm, std::stoi(args.at(1)), std::stoi(args.at(2)), [] { std::raise(SIGKILL); });
    } else if (mode == "stall") {
      loop_until(*comm, std::stoi(args.at(1)), std::stoi(args.at(2)), [] { ::pause(); });
    } else if (mode == "stop") {
      const int victim = std::stoi(args.at(1));
      loop_until(*comm, victim, std::stoi(args.at(2)), [] {
        std::fprintf(stderr, "rank_program: rank %s stops at %.3f\n", std::getenv("COLL_RANK"),
                     coll::now_seconds());
        std::raise(SIGSTOP);
      });
    } else if (mode == "stop-at-end") {
      std::vector<float> data(1000, 1.0f);
      comm->allreduce(data.data(), data.data(), data.size(), DataType::Float32, ReduceOp::Sum);
      if (comm->rank() == std::stoi(args.at(1))) std::raise(SIGSTOP);
    } else if (mode == "barrier-mismatch") {
      if (comm->rank() == 1) {
        comm->barrier();
      } else {
        std::uint8_t byte = 1;
        comm->allreduce(&byte, &byte, 1, DataType::Uint8, ReduceOp::Max,
                        args.size() > 1 ? args[1] : "ring");
      }
    } else if (mode == "huge-count") {
      refuse_huge_counts(*comm);
    } else if (mode == "in-place-odd") {
      std::vector<float> send(1000, 1.0f), recv(1000);
      const float* input = comm->rank() % 2 == 1 ? recv.data() : send.data();
      comm->allreduce(input, recv.data(), recv.size(), DataType::Float32, ReduceOp::Sum, "auto");
    } else if (mode == "mismatch") {
      std::vector<float> data(128, 1.0f);
      const std::size_t count = comm->rank() == 1 ? 101 : 100;
      comm->allreduce(data.data(), data.data(), count, DataType::Float32, ReduceOp::Sum,
                      args.size() > 1 ? args[1] : "");
    }
    return 0;
  } catch (const coll::Error& error) {
    std::fprintf(stderr, "rank_program: %s\n", error.what());
    return 1;
  }
}
