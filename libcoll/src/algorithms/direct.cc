// Direct all-reduce for small messages: every rank sends its whole vector to every other rank in
// one step and reduces the n vectors in rank order, so a collective costs one message latency
// where the ring pays 2(n-1) and halving-doubling 2 log2(n). The message to the next rank
// carries the argument check (CallCheck), so with the check on there is still one step. Vectors
// longer than COLL_SEGMENT_BYTES go segment by segment, which bounds the staging memory.
//
// Cost (the "direct" or "all-to-all" reduction of Thakur, Rabenseifner & Gropp 2005, with every
// rank reducing): per segment each rank sends (n-1) vectors over its port and takes (n-1), each
// message holding the port alpha (a message's alpha is its ends' time, as a linear exchange pays
// it), and reduces (n-1) times: T = S*(n-1)*alpha + (n-1)*M*beta + (n-1)*M*gamma for S segments
// on one node.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "algorithms/direct_schedule.hpp"
#include "algorithms/pipeline.hpp"
#include "algorithms/registry.hpp"
#include "model/link_model.hpp"
#include "reduce/reducer.hpp"
#include "transport/job_failure.hpp"
#include "transport/waiter.hpp"

namespace coll {
namespace {

class Direct {
 public:
  Direct(const CollectiveContext& context, const AllreduceArgs& args)
      : context_(context),
        args_(args),
        elem_(dtype_size(args.type)),
        n_(context.group.size()),
        me_(context.group.me),
        schedule_(n_),
        cut_(Segmentation::of(context, elem_, args.count, 1)) {}

  void run() {
    for (std::size_t segment = 0; segment < cut_.segments(); ++segment) exchange(segment);
  }

 private:
  // Leased at first use: two ranks whose one message carries the check receive into the
  // check's buffer and never stage.
  std::byte* slot(int member) {
    if (!staging_) staging_.emplace(context_.pool.acquire(std::size_t(n_) * cut_.elems() * elem_));
    return staging_->data() + std::size_t(member) * cut_.elems() * elem_;
  }

  // Every rank's piece `segment` to every other, then the n pieces reduced in rank order.
  void exchange(std::size_t segment) {
    Transport& transport = context_.transport;
    const Group& group = context_.group;
    const Piece piece = cut_.piece(args_.count, segment);
    const std::size_t bytes = piece.length * elem_;
    const auto* mine = static_cast<const std::byte*>(args_.send) + piece.offset * elem_;
    auto* out = static_cast<std::byte*>(args_.recv) + piece.offset * elem_;
    const auto message = static_cast<std::uint32_t>(segment);

    CallCheck* check = segment == 0 ? context_.call_check : nullptr;
    const bool carried = check != nullptr && bytes <= CallCheck::kMaxCarriedBytes;
    if (check != nullptr && !carried) {  // too long to carry: the check as a round first
      check->send(nullptr, 0);
      check->receive();
    }
    std::vector<const std::byte*> pieces(static_cast<std::size_t>(n_));
    std::vector<Transport::Request> receives;
    for (int shift = carried ? 1 : 0; shift < schedule_.shifts(); ++shift) {
      const int from = schedule_.source(me_, shift);
      receives.push_back(transport.recv(
          group.global(from), context_.tags.make(group.global(from), message), slot(from), bytes));
      pieces[static_cast<std::size_t>(from)] = slot(from);
    }
    std::vector<Transport::Request> sends;
    for (int shift = 0; shift < schedule_.shifts(); ++shift) {
      if (shift == 0 && carried) {
        check->send(mine, bytes);
        continue;
      }
      const int to = schedule_.destination(me_, shift);
      sends.push_back(transport.send(group.global(to),
                                     context_.tags.make(group.global(me_), message), mine, bytes));
    }
    if (carried) {  // the previous rank's call is compared before its data is used
      const std::span<const std::byte> previous = check->receive();
      if (previous.size() != bytes)
        fail_everywhere(transport, size_mismatch_reason(group.global(schedule_.source(me_, 0)),
                                                        group.global(me_), bytes));
      pieces[static_cast<std::size_t>(schedule_.source(me_, 0))] = previous.data();
    }
    transport.wait_all(receives);
    transport.wait_all(sends);  // in place, `out` is this rank's input until they are sent
    // In place, the first reductions overwrite this rank's input before its turn comes: keep it.
    if (out == mine && me_ >= 2) {
      std::memcpy(slot(me_), mine, bytes);
      pieces[static_cast<std::size_t>(me_)] = slot(me_);
    } else {
      pieces[static_cast<std::size_t>(me_)] = mine;
    }
    context_.reduce(args_.type, args_.op, out, pieces[0], pieces[1], piece.length);
    for (int member = 2; member < n_; ++member) {
      context_.reduce(args_.type, args_.op, out, out, pieces[static_cast<std::size_t>(member)],
                      piece.length);
    }
    if (args_.op == ReduceOp::Avg) finish_average(args_.type, out, piece.length, n_);
  }

  const CollectiveContext& context_;
  const AllreduceArgs& args_;
  const std::size_t elem_;
  const int n_;
  const int me_;
  const DirectSchedule schedule_;
  const Segmentation cut_;
  std::optional<BufferPool::Lease> staging_;
};

void direct_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  if (trivial_allreduce(context, args)) return;
  Direct(context, args).run();
}

std::optional<model::Prediction> direct_cost(const model::CostParams& params,
                                             const model::Shape& shape, double m,
                                             const Tuning& tuning) {
  model::Prediction out{"direct"};
  const int p = shape.ranks;
  if (p < 2) return out;
  // Per rank of the largest node (L ranks): L-1 vectors to its node's ranks, the node's L ranks
  // at once through the node's staging path; p-L vectors over the NIC, which its L ranks share
  // (where there is one). Priced in closed form: the shifts of DirectSchedule pair every rank
  // with every other once.
  const int local = shape.max_local();
  const double intra = (local - 1) * m * model::intra_beta(params, local);
  const double inter = double(p - local) * (params.transport.nic_shared ? local : 1) * m *
                       params.inter.beta_s_per_byte;
  const double segments = tuning.segments_in(m, shape.nodes > 1);
  out.latency_s = segments * model::phase_alpha(params, local - 1, p - local);
  out.bandwidth_s = intra + inter;
  out.reduction_s = (p - 1) * m * params.gamma_s_per_byte;
  out.detail =
      model::detail_text("1 step per segment, %d vectors sent and reduced per rank", p - 1);
  return out;
}

const AlgorithmRegistration kDirect({.name = "direct",
                                     .run = direct_allreduce,
                                     .summary = "every rank sends its vector to every other and "
                                                "reduces all n in rank order; 1 latency step, for "
                                                "small messages",
                                     .order = 25,
                                     .cost = direct_cost,
                                     .carries_call_check = true});

}  // namespace
}  // namespace coll
