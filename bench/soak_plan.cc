#include "soak_plan.hpp"

#include <algorithm>
#include <bit>
#include <random>

namespace collbench {
namespace {

using Rng = std::mt19937_64;

// splitmix64: well-spread per-operation seeds from (seed, index).
std::uint64_t mix(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + (index + 1) * 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [0, n).
std::size_t pick(Rng& rng, std::size_t n) {
  return n <= 1 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

// The sizes that break algorithms: empty, one element, fewer elements than ranks, counts that
// do not divide by the ranks, and large ones (log-uniform, so every magnitude gets its turn).
std::size_t draw_count(Rng& rng, int ranks, std::size_t max_count) {
  const std::size_t n = static_cast<std::size_t>(ranks);
  std::size_t count = 0;
  const std::size_t category = pick(rng, 20);
  if (category == 0) {
    count = 0;
  } else if (category == 1) {
    count = 1;
  } else if (category < 4) {
    count = 1 + pick(rng, std::max<std::size_t>(n - 1, 1));
  } else if (category < 12) {
    count = n * (1 + pick(rng, 1000)) + (n > 1 ? 1 + pick(rng, n - 1) : 0);
  } else if (category < 18) {
    count = 1000 + pick(rng, 255000);
  } else if (max_count > (std::size_t{1} << 18)) {
    const int top = std::bit_width(max_count);
    const int bits = 19 + static_cast<int>(pick(rng, static_cast<std::size_t>(top - 18)));
    count = (std::size_t{1} << (bits - 1)) + pick(rng, std::size_t{1} << (bits - 1));
  } else {
    count = pick(rng, max_count + 1);
  }
  return std::min(count, max_count);
}

SoakCall draw_call(Rng& rng, SweepKind kind, int ranks, std::size_t max_bytes,
                   const std::vector<std::string>& algorithms) {
  SoakCall call;
  call.kind = kind;
  call.type = static_cast<coll::DataType>(pick(rng, coll::kNumDataTypes));
  call.op = static_cast<coll::ReduceOp>(pick(rng, coll::kNumReduceOps));
  if (kind == SweepKind::AllReduce) call.algorithm = algorithms[pick(rng, algorithms.size())];
  call.in_place = pick(rng, 2) == 1;
  const std::size_t max_count = max_bytes / coll::dtype_size(call.type);
  const bool blocked = kind == SweepKind::AllGather || kind == SweepKind::ReduceScatter;
  call.count = blocked ? draw_count(rng, ranks, max_count / std::size_t(ranks)) * std::size_t(ranks)
                       : draw_count(rng, ranks, max_count);
  return call;
}

}  // namespace

SoakPlan::SoakPlan(std::uint64_t seed, int ranks, std::size_t max_bytes,
                   std::vector<std::string> algorithms)
    : seed_(seed), ranks_(ranks), max_bytes_(max_bytes), algorithms_(std::move(algorithms)) {
  if (algorithms_.empty()) algorithms_.push_back("");
}

SoakOp SoakPlan::op(std::size_t index) const {
  Rng rng(mix(seed_, index));
  SoakOp op;
  op.index = index;
  const std::size_t mode = pick(rng, 20);
  if (mode < 12) {
    // All-reduce twice as often as each of the other collectives.
    constexpr SweepKind kinds[] = {SweepKind::AllReduce, SweepKind::AllReduce,
                                   SweepKind::Broadcast, SweepKind::Reduce,
                                   SweepKind::AllGather, SweepKind::ReduceScatter};
    op.calls.push_back(
        draw_call(rng, kinds[pick(rng, std::size(kinds))], ranks_, max_bytes_, algorithms_));
  } else if (mode < 17) {
    op.mode = SoakMode::Queued;
    const std::size_t calls = 1 + pick(rng, 4);
    for (std::size_t i = 0; i < calls; ++i) {
      op.calls.push_back(draw_call(rng, SweepKind::AllReduce, ranks_, max_bytes_, algorithms_));
    }
    op.blocking_tail = pick(rng, 2) == 1;
  } else {
    op.mode = SoakMode::Fused;
    const SoakCall first = draw_call(rng, SweepKind::AllReduce, ranks_, max_bytes_, algorithms_);
    const std::size_t tensors = 1 + pick(rng, 5);
    for (std::size_t i = 0; i < tensors; ++i) {
      SoakCall tensor = first;
      tensor.in_place = true;  // a fused all-reduce reduces every tensor in place
      // The fused buffer holds them all: keep the whole under max_bytes.
      tensor.count = draw_count(rng, ranks_, max_bytes_ / coll::dtype_size(first.type) / tensors);
      op.calls.push_back(tensor);
    }
  }
  return op;
}

std::string describe(const SoakCall& call) {
  std::string text(sweep_kind_name(call.kind));
  if (call.kind == SweepKind::AllReduce) {
    text += " " + (call.algorithm.empty() ? std::string("default") : call.algorithm);
  }
  text += " " + std::string(coll::dtype_name(call.type));
  if (call.kind != SweepKind::Broadcast && call.kind != SweepKind::AllGather) {
    text += " " + std::string(coll::op_name(call.op));
  }
  text += " count " + std::to_string(call.count);
  text += call.in_place ? " in place" : " out of place";
  return text;
}

std::string describe(const SoakOp& op) {
  static constexpr const char* kModes[] = {"blocking", "queued", "fused"};
  std::string text = "op " + std::to_string(op.index) + " (" + kModes[static_cast<int>(op.mode)] +
                     (op.blocking_tail ? ", last call blocking" : "") + "):";
  for (const auto& call : op.calls) text += (op.calls.size() > 1 ? "\n    " : " ") + describe(call);
  return text;
}

}  // namespace collbench
