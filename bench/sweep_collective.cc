#include "sweep_collective.hpp"

#include <array>
#include <cstring>

#include "exact_data.hpp"

namespace collbench {
namespace {

constexpr std::array<std::pair<SweepKind, std::string_view>, 5> kNames{{
    {SweepKind::AllReduce, "allreduce"},
    {SweepKind::Broadcast, "broadcast"},
    {SweepKind::Reduce, "reduce"},
    {SweepKind::AllGather, "allgather"},
    {SweepKind::ReduceScatter, "reducescatter"},
}};

constexpr int kRoot = 0;

bool blocked(SweepKind kind) {
  return kind == SweepKind::AllGather || kind == SweepKind::ReduceScatter;
}

}  // namespace

std::optional<SweepKind> parse_sweep_kind(std::string_view name) {
  for (const auto& [kind, known] : kNames) {
    if (name == known) return kind;
  }
  return std::nullopt;
}

std::string_view sweep_kind_name(SweepKind kind) {
  for (const auto& [known_kind, name] : kNames) {
    if (kind == known_kind) return name;
  }
  return "?";
}

std::string sweep_kind_names() {
  std::string names;
  for (const auto& entry : kNames) names += (names.empty() ? "" : ", ") + std::string(entry.second);
  return names;
}

SweepCollective::SweepCollective(SweepKind kind, coll::Comm& comm, coll::DataType type,
                                 coll::ReduceOp op, std::string algorithm)
    : kind_(kind), comm_(comm), type_(type), op_(op), algorithm_(std::move(algorithm)) {}

std::size_t SweepCollective::total_count(std::size_t bytes) const {
  const std::size_t count = bytes / coll::dtype_size(type_);
  return blocked(kind_) ? block(count) * std::size_t(comm_.size()) : count;
}

double SweepCollective::bus_factor() const {
  const double n = comm_.size();
  switch (kind_) {
    case SweepKind::AllReduce:
      return n > 1 ? 2 * (n - 1) / n : 0;
    case SweepKind::AllGather:
    case SweepKind::ReduceScatter:
      return (n - 1) / n;
    case SweepKind::Broadcast:
    case SweepKind::Reduce:
      return 1;
  }
  return 0;
}

const std::byte* SweepCollective::prepare(std::byte* send, std::byte* recv, std::size_t total,
                                          bool in_place) const {
  const std::size_t elem = coll::dtype_size(type_);
  switch (kind_) {
    case SweepKind::AllGather: {
      // Every rank's block is its own input for those elements of the vector.
      const std::size_t first = my_block_offset(total);
      std::byte* input = in_place ? recv + first * elem : send;
      fill_input(type_, op_, comm_.rank(), input, block(total), first);
      return input;
    }
    case SweepKind::Broadcast:
      std::memset(recv, 0, total * elem);  // a broadcast that moved nothing must show
      break;
    default:
      break;
  }
  std::byte* input = in_place ? recv : send;
  fill_input(type_, op_, comm_.rank(), input, total);
  return input;
}

void SweepCollective::call(const std::byte* input, std::byte* recv, std::size_t total) const {
  switch (kind_) {
    case SweepKind::AllReduce:
      comm_.allreduce(input, recv, total, type_, op_, algorithm_);
      return;
    case SweepKind::Broadcast:
      comm_.broadcast(input, recv, total, type_, kRoot);
      return;
    case SweepKind::Reduce:
      comm_.reduce(input, recv, total, type_, op_, kRoot);
      return;
    case SweepKind::AllGather:
      comm_.allgather(input, recv, block(total), type_);
      return;
    case SweepKind::ReduceScatter:
      // In place (input == recv), rank r's block of the vector is its output.
      comm_.reduce_scatter(
          input, recv + (input == recv ? my_block_offset(total) : 0) * coll::dtype_size(type_),
          block(total), type_, op_);
      return;
  }
}

std::size_t SweepCollective::wrong(const std::byte* input, const std::byte* recv,
                                   std::size_t total) const {
  const int ranks = comm_.size();
  const std::size_t elem = coll::dtype_size(type_);
  switch (kind_) {
    case SweepKind::AllReduce:
      return count_wrong(type_, op_, ranks, recv, total);
    case SweepKind::Broadcast:
      return count_unlike_input(type_, op_, kRoot, recv, total, 0);
    case SweepKind::Reduce:
      return comm_.rank() == kRoot ? count_wrong(type_, op_, ranks, recv, total) : 0;
    case SweepKind::AllGather: {
      std::size_t wrong = 0;
      for (int r = 0; r < ranks; ++r) {
        const std::size_t first = std::size_t(r) * block(total);
        wrong += count_unlike_input(type_, op_, r, recv + first * elem, block(total), first);
      }
      return wrong;
    }
    case SweepKind::ReduceScatter: {
      const std::size_t first = my_block_offset(total);
      const std::byte* output = input == recv ? recv + first * elem : recv;
      return count_wrong(type_, op_, ranks, output, block(total), first);
    }
  }
  return 0;
}

}  // namespace collbench
