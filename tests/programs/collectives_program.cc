// A rank process for the tests of broadcast, reduce, all-gather, reduce-scatter, split and
// abort. Its first argument picks a behaviour:
//   check COUNT...   every collective, dtype and op, in and out of place, every root, bit-exact
//   split            sub-communicators by color and key, used alone and between parent calls
//   abort            rank 0 aborts from a second thread while waiting for rank 1, who is late
//   mismatch KIND    rank 1 calls a different collective (kind), root (root), or a direct
//                    all-reduce, which carries the check in its data (allreduce), than the others
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "coll/buffer_pool.hpp"
#include "coll/comm.hpp"
#include "exact_data.hpp"

namespace {

using coll::DataType;
using coll::ReduceOp;

struct Checker {
  coll::Comm& comm;
  coll::BufferPool pool;
  std::size_t wrong = 0;

  void report(const char* what, DataType type, ReduceOp op, std::size_t count, bool in_place,
              std::size_t bad) {
    if (bad == 0) return;
    std::fprintf(stderr, "rank %d: %s %s %s count %zu %s: %zu wrong\n", comm.rank(), what,
                 std::string(coll::dtype_name(type)).c_str(),
                 std::string(coll::op_name(op)).c_str(), count,
                 in_place ? "in place" : "out of place", bad);
    wrong += bad;
  }

  void broadcast(DataType type, std::size_t count, int root, bool in_place) {
    const std::size_t bytes = count * coll::dtype_size(type);
    auto send = pool.acquire(bytes + 1), recv = pool.acquire(bytes + 1);
    std::memset(recv.data(), 0x5a, bytes);
    std::byte* input = in_place ? recv.data() : send.data();
    if (comm.rank() == root) collbench::fill_input(type, ReduceOp::Sum, root, input, count);
    comm.broadcast(input, recv.data(), count, type, root);
    report("broadcast", type, ReduceOp::Sum, count, in_place,
           collbench::count_unlike_input(type, ReduceOp::Sum, root, recv.data(), count));
  }

  void reduce(DataType type, ReduceOp op, std::size_t count, int root, bool in_place) {
    const std::size_t bytes = count * coll::dtype_size(type);
    auto send = pool.acquire(bytes + 1), recv = pool.acquire(bytes + 1);
    std::byte* input = in_place ? recv.data() : send.data();
    collbench::fill_input(type, op, comm.rank(), input, count);
    // Non-roots pass no receive buffer when out of place, as NCCL allows.
    void* output = comm.rank() == root || in_place ? recv.data() : nullptr;
    comm.reduce(input, output, count, type, op, root);
    if (comm.rank() == root) {
      report("reduce", type, op, count, in_place,
             collbench::count_wrong(type, op, comm.size(), recv.data(), count));
    }
  }

  void allgather(DataType type, std::size_t count, bool in_place) {
    const std::size_t bytes = count * coll::dtype_size(type);
    const auto ranks = static_cast<std::size_t>(comm.size());
    auto send = pool.acquire(bytes + 1), recv = pool.acquire(ranks * bytes + 1);
    std::byte* input =
        in_place ? recv.data() + static_cast<std::size_t>(comm.rank()) * bytes : send.data();
    collbench::fill_input(type, ReduceOp::Sum, comm.rank(), input, count);
    comm.allgather(input, recv.data(), count, type);
    std::size_t bad = 0;
    for (int r = 0; r < comm.size(); ++r) {
      bad += collbench::count_unlike_input(
          type, ReduceOp::Sum, r, recv.data() + static_cast<std::size_t>(r) * bytes, count);
    }
    report("allgather", type, ReduceOp::Sum, count, in_place, bad);
  }

  void reduce_scatter(DataType type, ReduceOp op, std::size_t count, bool in_place) {
    const std::size_t bytes = count * coll::dtype_size(type);
    const auto ranks = static_cast<std::size_t>(comm.size());
    auto send = pool.acquire(ranks * bytes + 1), recv = pool.acquire(bytes + 1);
    collbench::fill_input(type, op, comm.rank(), send.data(), ranks * count);
    const std::size_t mine = static_cast<std::size_t>(comm.rank()) * count;
    std::byte* output = in_place ? send.data() + mine * coll::dtype_size(type) : recv.data();
    comm.reduce_scatter(send.data(), output, count, type, op);
    report("reduce_scatter", type, op, count, in_place,
           collbench::count_wrong(type, op, comm.size(), output, count, mine));
  }

  void all(const std::vector<std::size_t>& counts) {
    std::size_t largest = 0;
    for (std::size_t c : counts) largest = std::max(largest, c);
    const std::vector<int> roots = {0, comm.size() / 2, comm.size() - 1};
    for (int t = 0; t < coll::kNumDataTypes; ++t) {
      const auto type = static_cast<DataType>(t);
      for (std::size_t count : counts) {
        // The largest count runs for sums from one root only: the rest cover every variant.
        const bool large = count == largest && largest > 64;
        for (bool in_place : {false, true}) {
          for (int root : roots) {
            if (large && root != roots.back()) continue;
            broadcast(type, count, root, in_place);
          }
          allgather(type, count, in_place);
          for (int o = 0; o < coll::kNumReduceOps; ++o) {
            const auto op = static_cast<ReduceOp>(o);
            if (large && op != ReduceOp::Sum) continue;
            for (int root : roots) {
              if (large && root != roots.back()) continue;
              reduce(type, op, count, root, in_place);
            }
            reduce_scatter(type, op, count, in_place);
          }
        }
      }
    }
  }
};

// Odd and even ranks form two communicators ordered by descending rank; each checks its
// collectives, interleaved with calls on the parent; a third split leaves rank 0 out.
std::size_t check_split(coll::Comm& comm) {
  std::size_t wrong = 0;
  auto half = comm.split(comm.rank() % 2, -comm.rank());
  const int members = (comm.size() + 1 - comm.rank() % 2) / 2;
  const int expected_rank = (comm.size() - 1 - comm.rank()) / 2;
  if (half->size() != members || half->rank() != expected_rank) {
    std::fprintf(stderr, "rank %d: split gave rank %d of %d, expected %d of %d\n", comm.rank(),
                 half->rank(), half->size(), expected_rank, members);
    ++wrong;
  }
  Checker on_half{*half};
  Checker on_parent{comm};
  for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{70001}}) {
    on_half.broadcast(DataType::Int32, count, half->size() - 1, false);
    on_parent.reduce_scatter(DataType::Float32, ReduceOp::Sum, count, false);
    on_half.reduce_scatter(DataType::Bfloat16, ReduceOp::Max, count, true);
    on_half.allgather(DataType::Float64, count, false);
    on_parent.allgather(DataType::Int8, count, true);
    on_half.reduce(DataType::Float16, ReduceOp::Avg, count, 0, false);
    std::vector<float> ones(count, 1.0f);
    half->allreduce(ones.data(), ones.data(), count, DataType::Float32, ReduceOp::Sum);
    for (float value : ones) wrong += value != float(half->size());
  }
  // Ranks that pass no color get no communicator; the others still work, also point to point.
  auto rest = comm.split(comm.rank() == 0 ? coll::Comm::kSplitNoColor : 7, 0);
  if ((rest == nullptr) != (comm.rank() == 0)) ++wrong;
  if (rest && rest->size() == comm.size() - 1) {
    Checker on_rest{*rest};
    on_rest.allgather(DataType::Uint64, 33, false);
    wrong += on_rest.wrong;
    if (rest->size() > 1) {
      int token = rest->rank();
      if (rest->rank() == 0) rest->send(&token, sizeof token, 1, 9);
      if (rest->rank() == 1) {
        rest->recv(&token, sizeof token, 0, 9);
        wrong += token != 0;
      }
    }
  } else if (rest) {
    ++wrong;
  }
  return wrong + on_half.wrong + on_parent.wrong;
}

int check_abort(coll::Comm& comm) {
  if (comm.rank() != 0) {
    ::sleep(2);  // arrives only after rank 0 has aborted
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    comm.abort();
  });
  std::vector<float> data(1000, 1.0f);
  try {
    comm.allreduce(data.data(), data.data(), data.size(), DataType::Float32, ReduceOp::Sum);
    aborter.join();
    std::printf("allreduce completed without rank 1\n");
    return 1;
  } catch (const coll::Error& error) {
    aborter.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("rank 0 failed after %.2f s: %s\n", seconds, error.what());
    std::fflush(stdout);
    // Later calls fail at once too.
    try {
      comm.broadcast(data.data(), data.data(), 1, DataType::Float32, 0);
      return 1;
    } catch (const coll::Error& later) {
      std::printf("then: %s\n", later.what());
    }
    std::fflush(stdout);
    return seconds < 5 ? 0 : 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fprintf(stderr, "collectives_program: which behaviour?\n");
    return 2;
  }
  try {
    auto comm = coll::Comm::from_environment();
    const std::string& mode = args[0];
    std::size_t wrong = 0;
    if (mode == "check") {
      std::vector<std::size_t> counts;
      for (std::size_t i = 1; i < args.size(); ++i) counts.push_back(std::stoull(args[i]));
      Checker checker{*comm};
      checker.all(counts);
      wrong = checker.wrong;
    } else if (mode == "split") {
      wrong = check_split(*comm);
    } else if (mode == "mismatch") {
      std::vector<float> data(64 * static_cast<std::size_t>(comm->size()), 1.0f);
      if (comm->rank() == 1 && args.at(1) == "kind") {
        comm->allgather(data.data(), data.data(), 64, DataType::Float32);
      } else if (comm->rank() == 1 && args.at(1) == "allreduce") {
        comm->allreduce(data.data(), data.data(), 64, DataType::Float32, ReduceOp::Sum, "direct");
      } else {
        const int root = comm->rank() == 1 && args.at(1) == "root" ? 1 : 0;
        comm->broadcast(data.data(), data.data(), 64, DataType::Float32, root);
      }
    } else if (mode == "abort") {
      const int status = check_abort(*comm);
      std::fflush(stdout);
      std::_Exit(status);  // the job is broken: skip the goodbye with the other ranks
    } else {
      std::fprintf(stderr, "collectives_program: unknown behaviour %s\n", mode.c_str());
      return 2;
    }
    std::printf("rank %d: wrong %zu\n", comm->rank(), wrong);
    return wrong == 0 ? 0 : 1;
  } catch (const coll::Error& error) {
    std::fprintf(stderr, "collectives_program: %s\n", error.what());
    return 1;
  }
}
