// memory_bound: the memory-bandwidth ceiling of an all-reduce between ranks of one node,
// measured on this machine (STREAM-like, pre-touched buffers, median of repeats).
//
// Whatever the algorithm, each of p ranks of one node must read its whole input, read the other
// ranks' contributions to the 1/p of the result it reduces, and write the whole result: with
// every byte of input read once and every result byte written once, rank r at best computes its
// block as sum of p inputs (reads p*M/p, writes M/p) and copies the other (p-1)/p of the result
// (reads and writes (p-1)*M/p). This program runs exactly that work on p threads at once, with no
// communication and no synchronization inside, so no all-reduce on this machine can be faster.
// It also prints the single-thread and p-thread copy and add bandwidths (STREAM's Copy and Add).
//
// Usage: memory_bound [--bytes N[K|M|G]] [--ranks P] [--repeats R]   (prints one JSON object)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "coll/bulk_copy.hpp"
#include "coll/env.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// One rank's arrays: its input, its result, and a scratch line for the copy test.
struct RankArrays {
  std::vector<float> input, result;
  explicit RankArrays(std::size_t count) : input(count, 1.0f), result(count, 0.0f) {}
};

// Runs body(thread) on `threads` threads at once `repeats` times; median wall time.
template <class Body>
double time_parallel(int threads, int repeats, Body body) {
  std::vector<double> times;
  for (int r = 0; r < repeats + 1; ++r) {  // the first run warms caches and pages: not timed
    const auto start = Clock::now();
    std::vector<std::thread> workers;
    for (int t = 1; t < threads; ++t) workers.emplace_back(body, t);
    body(0);
    for (auto& worker : workers) worker.join();
    if (r > 0) times.push_back(seconds_since(start));
  }
  return median(times);
}

void add_into(float* out, const float* a, const float* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t bytes = 64u << 20;
  int ranks = 2;
  int repeats = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long value = coll::parse_size(argv[i + 1]).value_or(0);  // 0: refused below
    if (flag == "--bytes" && value > 0) {
      bytes = static_cast<std::size_t>(value);
    } else if (flag == "--ranks" && value > 0 && value <= 64) {
      ranks = static_cast<int>(value);
    } else if (flag == "--repeats" && value > 0) {
      repeats = static_cast<int>(value);
    } else {
      std::fprintf(stderr, "memory_bound: bad argument %s %s\n", argv[i], argv[i + 1]);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "usage: memory_bound [--bytes N[K|M|G]] [--ranks P] [--repeats R]\n");
    return 2;
  }
  const std::size_t count = bytes / sizeof(float);
  std::vector<RankArrays> arrays;
  for (int r = 0; r < ranks; ++r) arrays.emplace_back(count);

  const double copy_1 = time_parallel(1, repeats, [&](int) {
    std::memcpy(arrays[0].result.data(), arrays[0].input.data(), bytes);
  });
  const double copy_p = time_parallel(ranks, repeats, [&](int t) {
    std::memcpy(arrays[t].result.data(), arrays[t].input.data(), bytes);
  });
  const double add_1 = time_parallel(1, repeats, [&](int) {
    add_into(arrays[0].result.data(), arrays[0].input.data(), arrays[1 % ranks].input.data(),
             count);
  });
  const double add_p = time_parallel(ranks, repeats, [&](int t) {
    add_into(arrays[t].result.data(), arrays[t].input.data(), arrays[(t + 1) % ranks].input.data(),
             count);
  });
  // The all-reduce's minimum work, rank t on thread t: reduce block t from every rank's input,
  // then copy every other block of the result (from the rank that reduced it).
  const std::size_t block = count / static_cast<std::size_t>(ranks);
  const double bound = time_parallel(ranks, repeats, [&](int t) {
    const std::size_t begin = static_cast<std::size_t>(t) * block;
    float* out = arrays[t].result.data() + begin;
    add_into(out, arrays[0].input.data() + begin, arrays[1 % ranks].input.data() + begin, block);
    for (int r = 2; r < ranks; ++r) add_into(out, out, arrays[r].input.data() + begin, block);
    for (int r = 0; r < ranks; ++r) {
      if (r == t) continue;
      const std::size_t other = static_cast<std::size_t>(r) * block;
      coll::bulk_copy(arrays[t].result.data() + other, arrays[r].input.data() + other,
                      block * sizeof(float));
    }
  });
  const double gb = 1e9;
  const double mb = static_cast<double>(bytes);
  std::printf(
      "{\"bytes\": %zu, \"ranks\": %d, \"repeats\": %d,\n"
      " \"copy_GBps_1thread\": %.2f, \"copy_GBps_%dthreads\": %.2f,\n"
      " \"add_GBps_1thread\": %.2f, \"add_GBps_%dthreads\": %.2f,\n"
      " \"allreduce_bound_ms\": %.3f, \"allreduce_bound_algbw_GBps\": %.2f}\n",
      bytes, ranks, repeats, 2 * mb / copy_1 / gb, ranks, 2 * mb * ranks / copy_p / gb,
      3 * mb / add_1 / gb, ranks, 3 * mb * ranks / add_p / gb, bound * 1e3, mb / bound / gb);
  return 0;
}
