// Shared-memory all-reduce between ranks of one node, for small vectors: no message at all. Each
// rank copies its vector (and its call descriptor, for the argument check) into its slot of the
// node's shared segment (NodeResources::node_slots) and publishes it with one store; once it sees
// every rank's publication it reduces the n vectors in rank order, the peers' straight from their
// slots, so every rank computes the same bits. Vectors longer than a slot go slot by slot, a round
// each. Where the group spans nodes, or the transport has no slots (COLL_NODE_SLOTS=0, shaped
// links), every rank of the group runs direct instead.
//
// Cost: per round one hand-off (a published line seen by the peers: measured by the ranks when
// the transport connects, CostParams::slot_handoff_s), the copy of M into the slot (one copy: half
// a message's intra-node beta), and (n-1) reductions of M that read the peers' slots. Each adds a
// peer's slot to a vector in cache (this rank's input or the running sum, a slot's worth at a
// time), so it moves 2/3 of the memory traffic gamma was measured with (c = a + b, all in
// memory), as peer_read's reduction does. Beyond kPeerSlotsCopiedAboveBytes each peer's slot is
// also priced as a copy across cores (half a message's beta).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "algorithms/registry.hpp"
#include "algorithms/slot_rounds.hpp"
#include "coll/error.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

// Messages past a core's L2 (1 MiB on the build VM) stream through the caches: the peers'
// slots, written a round before, then cost their reader a copy across cores. Measured there at
// 2 ranks on plain buffers, each alternated with Open MPI's own path in one process (2026-12-07,
// docs/algorithms.md): Open MPI / shm 1.02-1.07 at 2 MiB and 1.11-1.69 at 4 MiB against staged
// peer_read's 1.18-1.29 and 1.08-1.50, and level with Open MPI at 16-64 MiB in 8 of 12 launches
// against peer_read's 1.6-1.9 in all 12. Below, that price was tried and lost (2026-12-03: it
// moved the 2-rank crossover to ring from 32 KiB, which a slow phase then ran 40 % behind shm).
constexpr double kPeerSlotsCopiedAboveBytes = 1024.0 * 1024;

class ShmAllreduce {
 public:
  ShmAllreduce(const CollectiveContext& context, const AllreduceArgs& args)
      : context_(context),
        args_(args),
        group_(context.group),
        rounds_(context),
        elem_(dtype_size(args.type)),
        round_elems_(NodeSlots::kPayloadBytes / elem_) {}

  void run() {
    const std::size_t rounds = (args_.count + round_elems_ - 1) / round_elems_;
    if (rounds > SlotRounds::kMaxRounds) {
      throw Error(Status::InvalidArgument, "shm all-reduce: more than 2^24 slot rounds");
    }
    for (std::size_t round = 0; round < rounds; ++round) run_round(round);
  }

 private:
  void run_round(std::size_t round) {
    const std::size_t offset = round * round_elems_;
    const std::size_t length = std::min(round_elems_, args_.count - offset);
    NodeSlots::Buffer& mine = rounds_.begin(round);
    std::memcpy(mine.payload, static_cast<const std::byte*>(args_.send) + offset * elem_,
                length * elem_);
    // Without the argument check, the first round still carries the vector's size: ranks that
    // passed different counts would otherwise run different numbers of rounds, and the shorter
    // would return as if all were well.
    const bool sizes_unchecked = round == 0 && context_.call_check == nullptr;
    const std::uint64_t bytes = args_.count * elem_;
    if (sizes_unchecked) mine.call_digest = bytes;
    rounds_.publish_and_wait(length * elem_);
    if (sizes_unchecked) {
      refuse_other_sizes(context_, bytes,
                         [&](int member) { return rounds_.of(member).call_digest; });
    }

    auto* out = static_cast<std::byte*>(args_.recv) + offset * elem_;
    const auto* own = static_cast<const std::byte*>(args_.send) + offset * elem_;
    // This rank's own vector is read where it is private, not from its slot: the peers' reads
    // may have taken the slot's lines to their caches. In place, only until `out` overwrites it.
    const bool own_intact = args_.send != args_.recv || group_.me <= 1;
    const auto vector_of = [&](int member) {
      return member == group_.me && own_intact ? own : rounds_.of(member).payload;
    };
    context_.reduce(args_.type, args_.op, out, vector_of(0), vector_of(1), length);
    for (int member = 2; member < group_.size(); ++member) {
      context_.reduce(args_.type, args_.op, out, out, vector_of(member), length);
    }
    if (args_.op == ReduceOp::Avg) finish_average(args_.type, out, length, group_.size());
  }

  const CollectiveContext& context_;
  const AllreduceArgs& args_;
  const Group& group_;
  SlotRounds rounds_;
  const std::size_t elem_;
  const std::size_t round_elems_;
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
  if (shape.nodes > 1 || params.transport.slot_handoff_s <= 0) {
    return priced_as("direct", "shm", "without node slots", params, shape, m, tuning);
  }
  model::Prediction out{"shm"};
  const int p = shape.ranks;
  if (p < 2) return out;
  const double rounds = std::max(1.0, std::ceil(m / double(NodeSlots::kPayloadBytes)));
  out.latency_s = rounds * params.transport.slot_handoff_s;
  // The intra-node beta prices a message, copied twice (into the FIFO and out of it); a slot is
  // copied into once, and the peers' reads of it are their reductions.
  out.bandwidth_s = m * params.intra.beta_s_per_byte / 2;
  const bool peer_slots_copied = m > kPeerSlotsCopiedAboveBytes;
  if (peer_slots_copied) out.bandwidth_s += (p - 1) * m * params.intra.beta_s_per_byte / 2;
  out.reduction_s = 2.0 / 3.0 * (p - 1) * m * params.gamma_s_per_byte;
  out.detail = model::detail_text("%d slot round(s), %d slots reduced per rank",
                                  static_cast<int>(rounds), p) +
               (peer_slots_copied ? "; the peers' slots copied across cores" : "");
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
