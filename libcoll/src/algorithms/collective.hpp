// What every all-reduce algorithm receives: the buffers, the group of ranks it runs over, and
// the services it may use (transport, staging pool, tags, tuning).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "coll/buffer_pool.hpp"
#include "coll/selector.hpp"
#include "coll/tuning.hpp"
#include "coll/types.hpp"
#include "core/cost_clock.hpp"
#include "core/memory_type.hpp"
#include "reduce/reducer.hpp"
#include "transport/job_failure.hpp"
#include "transport/node_resources.hpp"
#include "transport/transport.hpp"
#include "transport/waiter.hpp"

namespace coll {

struct AllreduceArgs {
  const void* send;  // may equal recv (in place)
  void* recv;
  std::size_t count;
  DataType type;
  ReduceOp op;
  // Where the buffers live; an algorithm that does not accept device memory is never given it
  // (AlgorithmInfo::device_memory).
  MemoryType send_memory = MemoryType::Host;
  MemoryType recv_memory = MemoryType::Host;
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
    const int index = me + offset;  // neighbours (|offset| <= n) need no division
    if (index >= 0 && index < n) return index;
    if (index >= n && index < 2 * n) return index - n;
    if (index < 0 && index >= -n) return index + n;
    return (index % n + n) % n;
  }
};

// Unique tags per message: communicator context (8 bits) | collective sequence (12) | stage (4)
// | sender (16) | message (24). The context tells apart communicators split from one another,
// which share a transport (see docs/collectives.md). The sequence wraps: the argument check keeps
// neighbours within a collective of each other, and UCX matches equal tags from one sender in
// the order they were sent.
// Stages let concurrent sub-collectives of one collective (hierarchical rails) share a comm.
// Stage 15 carries the argument check, stage 14 point-to-point messages (sequence 0).
class TagSpace {
 public:
  static constexpr std::uint32_t kMaxMessages = 1u << 24;
  static constexpr unsigned kMaxStage = 13;      // algorithms may use stages 0..kMaxStage
  static constexpr unsigned kMaxContexts = 256;  // communicators sharing one transport
  TagSpace(std::uint64_t sequence, unsigned stage, unsigned context = 0)
      : sequence_(sequence), stage_(stage & 0xF), context_(context & (kMaxContexts - 1)) {}
  static TagSpace point_to_point(unsigned context = 0) { return TagSpace(0, 14, context); }

  Tag make(int sender, std::uint32_t message) const {
    return (std::uint64_t{context_} << 56) | ((sequence_ & 0xFFF) << 44) |
           (std::uint64_t{stage_} << 40) | (std::uint64_t(sender & 0xFFFF) << 24) |
           (message & (kMaxMessages - 1));
  }
  std::uint64_t sequence() const { return sequence_; }
  unsigned stage() const { return stage_; }
  unsigned context() const { return context_; }
  // The same collective's tags for a sub-collective running concurrently in `stage`.
  TagSpace with_stage(unsigned stage) const { return TagSpace(sequence_, stage, context_); }

 private:
  std::uint64_t sequence_;
  unsigned stage_;
  unsigned context_;
};

// The argument check (COLL_CHECK_ARGS) handed to an algorithm that carries it in its own first
// message to the next rank of the group (AlgorithmInfo::carries_call_check) instead of paying a
// round of its own: that message starts with this rank's call descriptor, and the one from the
// previous rank is compared before its data is used. Implemented by the communicator.
class CallCheck {
 public:
  // The most data a check message carries after the descriptor.
  static constexpr std::size_t kMaxCarriedBytes = 64 << 10;

  virtual ~CallCheck() = default;
  // Sends this rank's descriptor followed by `bytes` (at most kMaxCarriedBytes) of `data` to the
  // next rank of the group. Once per collective.
  virtual void send(const void* data, std::size_t bytes) = 0;
  // Waits for the previous rank's message and throws InvalidUsage, naming both calls, when its
  // call differs from this one; returns the data that followed its descriptor (valid until the
  // collective ends). Once per collective.
  virtual std::span<const std::byte> receive() = 0;

  // For an algorithm that hands every rank's descriptor to every other itself (through shared
  // memory), in place of send and receive:
  // This rank's descriptor, at most NodeSlots::kDescriptorBytes.
  virtual std::span<const std::byte> descriptor() const = 0;
  // Fails the job (InvalidUsage, naming both calls) when the two ranks' descriptors differ.
  virtual void compare(int first_rank, std::span<const std::byte> first, int second_rank,
                       std::span<const std::byte> second) = 0;
  // While such an algorithm waits: a previous rank that runs an algorithm which sends the check
  // as a message never joins this one; when its message has come, compares it (and fails).
  virtual void poll_message() = 0;
  // Every descriptor was compared: nothing remains to send or receive.
  virtual void compared_all() = 0;
};

// Whether the group's ranks are on more than one node (`node_of_rank` by global rank).
inline bool spans_nodes(const Group& group, const std::vector<int>& node_of_rank) {
  const int first = node_of_rank[static_cast<std::size_t>(group.global(0))];
  return std::any_of(group.ranks.begin(), group.ranks.end(), [&](int rank) {
    return node_of_rank[static_cast<std::size_t>(rank)] != first;
  });
}

struct CollectiveContext {
  Transport& transport;
  BufferPool& pool;
  const Group& group;
  const std::vector<int>& node_of_rank;  // indexed by global rank (see Comm::node_of_rank)
  TagSpace tags;
  // The communicator's, by reference: a copy per collective (its strings) cost 3 % of a small one.
  const Tuning& tuning;
  // Set only for an algorithm that carries the argument check, when the check is on; what the
  // algorithm leaves unsent or unreceived of it the communicator completes after it returns.
  CallCheck* call_check = nullptr;
  // The communicator's cost model (its parameters and node map: the same on every rank), for an
  // algorithm that lets it choose a level's algorithm (AlgorithmInfo::asks_cost_model); only
  // over the communicator's whole group. Null: none.
  const Selector* cost_model = nullptr;
  // What this rank shares with the others of its node besides messages (the communicator's);
  // null, or members null: none, and algorithms that would use them fall back to messages.
  const NodeResources* node = nullptr;
  // The communicator's clock (core/cost_clock.hpp), which every reduction is charged to.
  CostClock* clock = &steady_cost_clock();

  PeerMemory* peer_memory() const { return node ? node->peer_memory.get() : nullptr; }
  NodeSlots* node_slots() const { return node ? node->node_slots.get() : nullptr; }
  BufferPool* staging() const { return node ? node->staging.get() : nullptr; }

  // The pipelining unit: the network's where the group's ranks are on several nodes.
  std::size_t segment_bytes() const {
    return tuning.segment_bytes_for(spans_nodes(group, node_of_rank));
  }

  // The same collective over another group of its ranks in the same tag stage; the argument
  // check stays with the whole collective, and the cost model, which prices the communicator's
  // group, with the whole too.
  CollectiveContext over(const Group& other) const {
    return {transport, pool, other, node_of_rank, tags, tuning, nullptr, nullptr, node, clock};
  }
  // Over a sub-group, in its own tag stage (how algorithms compose).
  CollectiveContext on(const Group& sub_group, unsigned stage) const {
    CollectiveContext sub = over(sub_group);
    sub.tags = tags.with_stage(stage);
    return sub;
  }
  // dst = a op b over `count` elements (reduce/reducer.hpp), charged to the communicator's clock:
  // every algorithm's gamma term passes here, so on an emulated cluster's clock a reduction
  // costs that clock's time, not this CPU's.
  void reduce(DataType type, ReduceOp op, void* dst, const void* a, const void* b,
              std::size_t count) const {
    coll::reduce(type, op, dst, a, b, count);
    clock->charge_reduction(count * dtype_size(type));
  }
  // The ranks of the group, each as its node (indexed by group index).
  std::vector<int> node_of_member() const {
    std::vector<int> nodes;
    for (int index = 0; index < group.size(); ++index)
      nodes.push_back(node_of_rank[static_cast<std::size_t>(group.global(index))]);
    return nodes;
  }
};

// One rank, or nothing to reduce: the result is the input. Copies it (out of place) and returns
// true; returns false when the algorithm has work to do.
inline bool trivial_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  if (context.group.size() > 1 && args.count > 0) return false;
  if (args.send != args.recv && args.count > 0)
    std::memcpy(args.recv, args.send, args.count * dtype_size(args.type));
  return true;
}

// Where every rank has seen every member's byte count (`bytes_of(member)`, by group index), one
// that differs from this rank's `bytes` fails every rank before data moves, naming it: ranks
// whose counts differ would otherwise read past buffers or run different numbers of rounds.
template <typename BytesOf>
void refuse_other_sizes(const CollectiveContext& context, std::uint64_t bytes, BytesOf bytes_of) {
  const Group& group = context.group;
  for (int member = 0; member < group.size(); ++member) {
    if (member != group.me && bytes_of(member) != bytes) {
      fail_everywhere(context.transport,
                      size_mismatch_reason(group.global(member), group.global(group.me), bytes));
    }
  }
}

}  // namespace coll
