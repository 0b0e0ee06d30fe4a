// Shared-memory all-reduce between ranks of one node, for small vectors: no message at all. Each
// rank copies its vector (and its call descriptor, for the argument check) into its slot of the
// node's shared segment (Transport::node_slots) and publishes it with one store; once it sees
// every rank's publication it reduces the n slots in rank order straight from shared memory, so
// every rank computes the same bits. Vectors longer than a slot go slot by slot, a round each.
// Where the group spans nodes, or the transport has no slots (COLL_NODE_SLOTS=0, shaped links),
// every rank of the group runs direct instead.
//
// Cost: per round one hand-off (a published line seen by the peers: measured by the ranks when
// the transport connects, CostParams::slot_handoff_s), the copy of M into the slot (one copy: half
// a message's intra-node beta), and (n-1) reductions of M that read the peers' slots.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "algorithms/registry.hpp"
#include "coll/error.hpp"
#include "reduce/reducer.hpp"
#include "transport/node_slots.hpp"
#include "transport/waiter.hpp"

namespace coll {
namespace {

// A round's number: the collective's sequence and the round within it, never 0 (unwritten).
constexpr unsigned kRoundBits = 24;
constexpr int kInlinePolls = 64;

// Descriptors are compared every call: a word at a time, where memcmp's call cost more.
bool same_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  static_assert(NodeSlots::kDescriptorBytes % sizeof(std::uint64_t) == 0);
  std::uint64_t differ = 0;
  for (std::size_t at = 0; at < NodeSlots::kDescriptorBytes; at += sizeof differ) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + at, sizeof x);
    std::memcpy(&y, b.data() + at, sizeof y);
    differ |= x ^ y;
  }
  return differ == 0;
}

// The same answer on every rank of the group: the node map, the slots and the context are shared.
bool slots_serve(const CollectiveContext& context) {
  NodeSlots* slots = context.transport.node_slots();
  if (slots == nullptr || context.tags.stage() != 0 ||
      context.tags.context() >= NodeSlots::kContexts) {
    return false;
  }
  const Group& group = context.group;
  const int first = group.global(0);
  for (int member = 1; member < group.size(); ++member) {
    const int other = group.global(member);
    if (context.node_of_rank[first] != context.node_of_rank[other] ||
        !slots->connects(first, other)) {
      return false;
    }
  }
  return true;
}

class ShmAllreduce final : public WaitCondition {
 public:
  ShmAllreduce(const CollectiveContext& context, const AllreduceArgs& args)
      : context_(context),
        args_(args),
        slots_(*context.transport.node_slots()),
        group_(context.group),
        slot_context_(context.tags.context()),
        elem_(dtype_size(args.type)),
        round_elems_(NodeSlots::kPayloadBytes / elem_) {}

  void run() {
    const std::size_t rounds = (args_.count + round_elems_ - 1) / round_elems_;
    if (rounds >= (std::size_t{1} << kRoundBits)) {
      throw Error(Status::InvalidArgument, "shm all-reduce: more than 2^24 slot rounds");
    }
    for (std::size_t round = 0; round < rounds; ++round) run_round(round);
  }

  // WaitCondition: the members whose slot does not hold this round yet.
  std::size_t missing() override {
    while (first_missing_ < group_.size() &&
           (first_missing_ == group_.me ||
            theirs(first_missing_).round.load(std::memory_order_acquire) == round_)) {
      ++first_missing_;
    }
    return static_cast<std::size_t>(group_.size() - first_missing_);
  }
  int peer() const override { return group_.global(std::min(first_missing_, group_.size() - 1)); }
  void check_slow() override {
    if (context_.call_check != nullptr) context_.call_check->poll_message();
  }

 private:
  // Most publications arrive within a microsecond: polled here, without the waiter's set-up.
  bool arrives_soon() {
    for (int poll = 0; poll < kInlinePolls; ++poll) {
      if (missing() == 0) return true;
    }
    return false;
  }

  NodeSlots::Buffer& theirs(int member) {
    return turn_[NodeSlots::stride() * std::size_t(slots_.local_index(group_.global(member)))];
  }

  void run_round(std::size_t round) {
    const std::size_t offset = round * round_elems_;
    const std::size_t length = std::min(round_elems_, args_.count - offset);
    const std::size_t bytes = length * elem_;
    CallCheck* check = round == 0 ? context_.call_check : nullptr;
    round_ = (context_.tags.sequence() << kRoundBits) | (round + 1);
    turn_ = slots_.turn_buffers(slot_context_, slots_.turn(slot_context_));

    NodeSlots::Buffer& mine = theirs(group_.me);
    if (check != nullptr) {
      const auto descriptor = check->descriptor();
      if (descriptor.size() != NodeSlots::kDescriptorBytes) {
        throw Error(Status::InternalError, "shm all-reduce: a call descriptor of " +
                                               std::to_string(descriptor.size()) + " bytes");
      }
      std::memcpy(mine.descriptor, descriptor.data(), NodeSlots::kDescriptorBytes);
    }
    std::memcpy(mine.payload, static_cast<const std::byte*>(args_.send) + offset * elem_, bytes);
    mine.round.store(round_, std::memory_order_release);

    first_missing_ = 0;
    if (!arrives_soon()) context_.transport.wait_for(*this);
    if (check != nullptr) compare_calls(*check);

    auto* out = static_cast<std::byte*>(args_.recv) + offset * elem_;
    reduce(args_.type, args_.op, out, theirs(0).payload, theirs(1).payload, length);
    for (int member = 2; member < group_.size(); ++member) {
      reduce(args_.type, args_.op, out, out, theirs(member).payload, length);
    }
    if (args_.op == ReduceOp::Avg) finish_average(args_.type, out, length, group_.size());
    slots_.next_turn(slot_context_);
  }

  // Every rank sees every descriptor. When one differs from this rank's, each rank compares
  // them in the same order, so all of them name the same first pair that differs.
  void compare_calls(CallCheck& check) {
    const std::span<const std::byte> mine = check.descriptor();
    const auto described = [&](int member) {
      return std::span<const std::byte>(theirs(member).descriptor, mine.size());
    };
    bool agree = true;
    for (int member = 0; member < group_.size() && agree; ++member) {
      agree = member == group_.me || same_bytes(described(member), mine);
    }
    for (int second = 0; second < group_.size() && !agree; ++second) {  // throws at the first
      const int first = (second + group_.size() - 1) % group_.size();
      check.compare(group_.global(first), described(first), group_.global(second),
                    described(second));
    }
    check.compared_all();
  }

  const CollectiveContext& context_;
  const AllreduceArgs& args_;
  NodeSlots& slots_;
  const Group& group_;
  const unsigned slot_context_;
  const std::size_t elem_;
  const std::size_t round_elems_;
  std::uint64_t round_ = 0;
  NodeSlots::Buffer* turn_ = nullptr;  // this round's buffers of this context
  int first_missing_ = 0;
};

const AlgorithmInfo& direct() {
  static const AlgorithmInfo& info = *find_algorithm("direct");
  return info;
}

void shm_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  if (trivial_allreduce(context, args)) return;
  if (!slots_serve(context)) return direct().run(context, args);
  ShmAllreduce(context, args).run();
}

std::optional<model::Prediction> shm_cost(const model::CostParams& params,
                                          const model::Shape& shape, double m,
                                          const Tuning& tuning) {
  if (shape.nodes > 1 || params.slot_handoff_s <= 0) {
    return priced_as("direct", "shm", "without node slots", params, shape, m, tuning);
  }
  model::Prediction out{"shm"};
  const int p = shape.ranks;
  if (p < 2) return out;
  const double rounds = std::max(1.0, std::ceil(m / double(NodeSlots::kPayloadBytes)));
  out.latency_s = rounds * params.slot_handoff_s;
  // The intra-node beta prices a message, copied twice (into the FIFO and out of it); a slot is
  // copied into once, and the peers' reads of it are their reductions.
  out.bandwidth_s = m * params.intra.beta_s_per_byte / 2;
  out.reduction_s = (p - 1) * m * params.gamma_s_per_byte;
  out.detail = model::detail_text("%d slot round(s), %d slots reduced per rank",
                                  static_cast<int>(rounds), p);
  return out;
}

const AlgorithmRegistration kShm(
    {.name = "shm",
     .run = shm_allreduce,
     .summary = "ranks of one node hand each other their vectors "
                "through shared-memory slots, no messages; else direct",
     .order = 26,
     .cost = shm_cost,
     .carries_call_check = true,
     .compares_calls = true});

}  // namespace
}  // namespace coll
