// Ranks that call a collective with different arguments must fail loudly, not hang or corrupt
// data. Each rank sends its call's descriptor to the next rank of the ring and compares the one
// it receives from the previous rank; agreement of every neighbour pair is agreement of all.
// The communicator's step before every collective (it uses the transport and the tag space).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "algorithms/collective.hpp"

namespace coll {

enum class CollectiveKind : std::int32_t {
  AllReduce,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  Split,
  Barrier,
};

struct CallDescriptor {
  std::uint64_t sequence;
  std::uint64_t count;
  CollectiveKind kind;
  std::int32_t type;
  std::int32_t op;    // -1 where the collective has none
  std::int32_t root;  // -1 where the collective has none
  std::uint64_t tag;  // caller's id of the data (Comm::allreduce_async), 0 when none
  char algorithm[24];

  static CallDescriptor make(std::uint64_t sequence, const AllreduceArgs& args,
                             std::string_view algorithm, std::uint64_t tag = 0);
  // Any other collective; its sequence is set when it runs.
  static CallDescriptor of(CollectiveKind kind, std::size_t count, DataType type, int op, int root,
                           std::string_view algorithm);
  std::string describe() const;  // "allreduce #7 of 1000 x float32 sum (ring)"
};

// Exchanges descriptors with the ring neighbours of `group` (stage 15 of the collective's tags)
// and throws InvalidUsage naming both calls when they differ.
void check_same_call(Transport& transport, const Group& group, const TagSpace& tags,
                     const CallDescriptor& mine);

}  // namespace coll
