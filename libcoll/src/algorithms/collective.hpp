// What every all-reduce algorithm receives: the buffers, the group of ranks it runs over, and
// the services it may use (transport, staging pool, tags, tuning).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "coll/types.hpp"
#include "core/buffer_pool.hpp"
#include "transport/transport.hpp"

namespace coll {

struct AllreduceArgs {
  const void* send;  // may equal recv (in place)
  void* recv;
  std::size_t count;
  DataType type;
  ReduceOp op;
};

// The ranks an algorithm runs over, as global ranks; `me` indexes this rank in `ranks`.
// Algorithms only ever address peers through the group, which is how they run on sub-groups.
struct Group {
  std::vector<int> ranks;
  int me = 0;
  int size() const { return static_cast<int>(ranks.size()); }
  int global(int index) const { return ranks[static_cast<std::size_t>(index)]; }
  // The group index `offset` places after this rank, wrapping around.
  int index_after(int offset) const {
    const int n = size();
    return ((me + offset) % n + n) % n;
  }
};

// Unique tags per message: collective sequence (20 bits) | stage (4) | sender (16) | message (24).
// Stages let concurrent sub-collectives of one collective (hierarchical rails) share a comm.
class TagSpace {
 public:
  static constexpr std::uint32_t kMaxMessages = 1u << 24;
  TagSpace(std::uint64_t sequence, unsigned stage)
      : base_(((sequence & 0xFFFFF) << 44) | (std::uint64_t{stage & 0xF} << 40)) {}
  Tag make(int sender, std::uint32_t message) const {
    return base_ | (std::uint64_t(sender & 0xFFFF) << 24) | (message & (kMaxMessages - 1));
  }

 private:
  std::uint64_t base_;
};

struct Tuning {
  std::size_t segment_bytes = 256 << 10;  // COLL_SEGMENT_BYTES: pipelining unit
  int window = 4;                         // COLL_WINDOW: receives kept in flight
};

struct CollectiveContext {
  Transport& transport;
  BufferPool& pool;
  const Group& group;
  TagSpace tags;
  Tuning tuning;
};

}  // namespace coll
