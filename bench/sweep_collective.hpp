// The collective a sweep measures (--coll), with nccl-tests' definitions: which count the call
// takes for a swept size, the bus-bandwidth factor, and how its result is verified.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "coll/comm.hpp"

namespace collbench {

enum class SweepKind { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter };

std::optional<SweepKind> parse_sweep_kind(std::string_view name);
std::string_view sweep_kind_name(SweepKind kind);  // nccl-tests' names: "allgather", ...
std::string sweep_kind_names();                    // "allreduce, broadcast, ..." for errors

// One measured call of `kind` on a swept size. Sizes are nccl-tests': the bytes of the whole
// vector (all-gather: received; reduce-scatter: sent), so all-gather and reduce-scatter pass
// size / ranks elements per rank. Broadcast and reduce use root 0, as nccl-tests does.
class SweepCollective {
 public:
  SweepCollective(SweepKind kind, coll::Comm& comm, coll::DataType type, coll::ReduceOp op,
                  std::string algorithm);

  // Elements of the whole vector for a swept size (a multiple of the ranks where blocks).
  std::size_t total_count(std::size_t bytes) const;
  // busbw = algbw * factor: 2(n-1)/n all-reduce, (n-1)/n all-gather and reduce-scatter,
  // 1 broadcast and reduce.
  double bus_factor() const;

  // Writes this rank's exact inputs for a vector of `total` elements into the buffers (each of
  // at least total elements) and returns where the call reads from.
  const std::byte* prepare(std::byte* send, std::byte* recv, std::size_t total,
                           bool in_place) const;
  void call(const std::byte* input, std::byte* recv, std::size_t total) const;
  // Elements of this rank's result that differ from the exact reduction / source.
  std::size_t wrong(const std::byte* input, const std::byte* recv, std::size_t total) const;

 private:
  std::size_t block(std::size_t total) const { return total / std::size_t(comm_.size()); }
  std::size_t my_block_offset(std::size_t total) const {
    return std::size_t(comm_.rank()) * block(total);
  }

  SweepKind kind_;
  coll::Comm& comm_;
  coll::DataType type_;
  coll::ReduceOp op_;
  std::string algorithm_;
};

}  // namespace collbench
