// The random operations of collbench --soak. Operation i depends only on the seed, i and the job
// shape, so every rank draws the same one without talking, and a failing operation is reproduced
// by rerunning with the same seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "coll/types.hpp"
#include "sweep_collective.hpp"

namespace collbench {

// How an operation's calls are issued: one blocking collective; all-reduces queued on the
// progress engine (optionally followed by a blocking one, which queues behind them); or tensors
// in separate allocations fused into one all-reduce.
enum class SoakMode { Blocking, Queued, Fused };

struct SoakCall {
  SweepKind kind = SweepKind::AllReduce;
  coll::DataType type = coll::DataType::Float32;
  coll::ReduceOp op = coll::ReduceOp::Sum;
  std::string algorithm;  // all-reduce only; "" is the communicator's default
  std::size_t count = 0;  // SweepCollective's count: the whole vector (ranks x block where blocked)
  bool in_place = false;
};

struct SoakOp {
  std::size_t index = 0;
  SoakMode mode = SoakMode::Blocking;
  bool blocking_tail = false;   // Queued: the last call is a blocking all-reduce
  std::vector<SoakCall> calls;  // Fused: one tensor each, all of one type, op and algorithm
};

class SoakPlan {
 public:
  // `algorithms`: the all-reduce algorithms to draw from ("" and "auto" included if wanted);
  // no call moves more than max_bytes.
  SoakPlan(std::uint64_t seed, int ranks, std::size_t max_bytes,
           std::vector<std::string> algorithms);
  SoakOp op(std::size_t index) const;

 private:
  std::uint64_t seed_;
  int ranks_;
  std::size_t max_bytes_;
  std::vector<std::string> algorithms_;
};

// "allreduce ring int32 sum count 1001 out of place", one line per call of the operation.
std::string describe(const SoakCall& call);
std::string describe(const SoakOp& op);

}  // namespace collbench
