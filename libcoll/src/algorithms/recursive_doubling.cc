// Recursive doubling: log2(p) steps over the largest power of two p <= n ranks, in each of which
// a pair swaps its whole partial sum and both add the two, the lower member's first, so every
// rank ends with the same bits. Latency-optimal for small vectors (log2 p steps where
// halving-doubling takes 2 log2 p and the ring 2(n-1)); each rank sends log2(p) whole vectors,
// so large ones belong to the ring. Open MPI's tuned all-reduce uses it for short messages too.
// Ranks past the power of two fold in as in halving-doubling (halving_doubling_schedule.hpp).
// It carries the argument check without a round or a message of its own: each step's first
// message is the sender's call descriptor followed by its first piece, compared before the first
// sum, and agreement along every edge of the hypercube (and the fold) is agreement of all. A rank
// that runs another algorithm sends its check to the next rank instead of joining: a wait that
// is slow looks for that message (CallCheck::poll_message).
#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/doubling_cost.hpp"
#include "algorithms/halving_doubling_schedule.hpp"
#include "algorithms/pipeline.hpp"
#include "algorithms/registry.hpp"
#include "reduce/reducer.hpp"
#include "transport/job_failure.hpp"
#include "transport/waiter.hpp"

namespace coll {
namespace {

class RecursiveDoubling {
 public:
  RecursiveDoubling(const CollectiveContext& context, const AllreduceArgs& args)
      : context_(context),
        args_(args),
        elem_(dtype_size(args.type)),
        recv_(static_cast<std::byte*>(args.recv)),
        me_(context.group.me),
        pairs_(context.group.size()),
        // Message index = step * segments + segment: the fold, log2(p) steps, the result back.
        cut_(Segmentation::of(context, elem_, args.count, std::size_t(pairs_.steps()) + 2)),
        carried_(check_ != nullptr ? check_->descriptor().size() : 0) {}

  void run() {
    const auto* source = static_cast<const std::byte*>(args_.send);
    const int last_step = pairs_.steps() + 1;
    if (check_ != nullptr) check_->compared_all();  // by the pairs, below
    if (pairs_.folds(me_)) {
      const int partner = pairs_.fold_partner(me_);
      if (pairs_.sits_out(me_)) {  // hand over the whole vector, wait for the result
        auto box = context_.pool.acquire(first_message_bytes());
        auto sends = send_all(0, partner, source, box.data());
        context_.transport.wait_all(sends);
        receive_all(last_step, partner);
        return;
      }
      combine(0, partner, nullptr, source);
      source = recv_;
    }
    const int rank = pairs_.core_rank(me_);
    for (int step = 0; step < pairs_.steps(); ++step) {
      combine(1 + step, pairs_.partner(rank, step), source, source);
      source = recv_;
    }
    if (args_.op == ReduceOp::Avg) {
      finish_average(args_.type, recv_, args_.count, context_.group.size());
    }
    if (pairs_.folds(me_)) {
      auto sends = send_all(last_step, pairs_.fold_partner(me_), recv_, nullptr);
      context_.transport.wait_all(sends);
    }
  }

 private:
  Tag tag(int from, int step, std::size_t segment) const {
    return context_.tags.make(
        context_.group.global(from),
        static_cast<std::uint32_t>(std::size_t(step) * cut_.segments() + segment));
  }

  // A step's first message: with the check on, this rank's descriptor and then the first piece
  // (one message, as a lone step of a small vector is), compared by the peer before it adds.
  std::size_t first_message_bytes() const {
    return carried_ + cut_.piece(args_.count, 0).length * elem_;
  }
  // Room for a peer's first message: with the check on, as much as a check message may carry,
  // so that a peer called with another count is told apart by its descriptor, not its size.
  std::size_t inbox_bytes() const {
    return carried_ == 0 ? first_message_bytes()
                         : std::max(first_message_bytes(), carried_ + CallCheck::kMaxCarriedBytes);
  }

  // Waits for a step's first message from `peer`; with the check on, a slow wait also looks for
  // a check message from the previous rank (one running another collective sends that instead).
  class Arrival final : public WaitCondition {
   public:
    Arrival(RecursiveDoubling& algorithm, int peer, Transport::Request& first)
        : algorithm_(algorithm), peer_(peer), first_(first) {}
    std::size_t missing() override {
      Transport& transport = algorithm_.context_.transport;
      transport.progress();
      return transport.test(first_) ? 0 : 1;
    }
    int peer() const override { return algorithm_.context_.group.global(peer_); }
    void check_slow() override { algorithm_.check_->poll_message(); }

   private:
    RecursiveDoubling& algorithm_;
    const int peer_;
    Transport::Request& first_;
  };

  // The first message of a step from `peer`, in `box`: with the check on, its descriptor
  // compared with this rank's, then its length; returns where its piece starts.
  const std::byte* await_first(int peer, Transport::Request& first, const std::byte* box) {
    if (check_ == nullptr) {
      context_.transport.wait(first);
      return box;
    }
    Arrival arrival(*this, peer, first);
    context_.transport.wait_for(arrival);
    const int peer_global = context_.group.global(peer);
    const int me_global = context_.group.global(me_);
    if (first.bytes >= carried_) {
      check_->compare(peer_global, {box, carried_}, me_global, check_->descriptor());
    }
    if (first.bytes != first_message_bytes()) {
      fail_everywhere(context_.transport,
                      size_mismatch_reason(peer_global, me_global, first_message_bytes()));
    }
    return box + carried_;
  }

  // Sends `give` (null: nothing) to `peer`, receives its vector and writes mine + its (the lower
  // member's first) to recv, segment by segment from pooled staging slots. `give` and `mine`
  // may be recv itself: a segment is overwritten only once its send has completed.
  void combine(int step, int peer, const std::byte* give, const std::byte* mine) {
    Transport& transport = context_.transport;
    const int peer_global = context_.group.global(peer);
    const std::size_t segments = cut_.segments_of(args_.count);
    const std::size_t window = window_of(context_.tuning);
    const std::size_t slot_bytes = cut_.elems() * elem_;
    // The first piece travels in a box of its own, behind the descriptor: one for each way.
    auto staging =
        context_.pool.acquire(window * slot_bytes + inbox_bytes() + first_message_bytes());
    std::byte* inbox = staging.data() + window * slot_bytes;
    std::byte* outbox = inbox + inbox_bytes();
    std::vector<Transport::Request> sends;
    if (give != nullptr) sends = send_all(step, peer, give, outbox);
    std::vector<Transport::Request> receives(segments);
    auto slot = [&](std::size_t s) { return staging.data() + (s % window) * slot_bytes; };
    auto post = [&](std::size_t s) {
      const std::size_t bytes = cut_.piece(args_.count, s).length * elem_;
      if (s > 0) {
        receives[s] = transport.recv(peer_global, tag(peer, step, s), slot(s), bytes);
      } else if (carried_ > 0) {
        receives[s] = transport.recv_up_to(peer_global, tag(peer, step, 0), inbox, inbox_bytes());
      } else {
        receives[s] = transport.recv(peer_global, tag(peer, step, 0), inbox, bytes);
      }
    };
    auto finish = [&](std::size_t s) {
      const std::byte* theirs = s == 0 ? await_first(peer, receives[0], inbox) : slot(s);
      if (s > 0) transport.wait(receives[s]);
      if (!sends.empty()) transport.wait(sends[s]);
      const Piece piece = cut_.piece(args_.count, s);
      const std::size_t offset = piece.offset * elem_;
      const std::byte* first = peer < me_ ? theirs : mine + offset;
      const std::byte* second = peer < me_ ? mine + offset : theirs;
      context_.reduce(args_.type, args_.op, recv_ + offset, first, second, piece.length);
    };
    run_windowed(segments, window, post, finish);
  }

  // Posts the sends of `data` to `peer`, segment by segment; with the check on and an `outbox`
  // (first_message_bytes()), the first one carries this rank's descriptor.
  std::vector<Transport::Request> send_all(int step, int peer, const std::byte* data,
                                           std::byte* outbox) {
    std::vector<Transport::Request> sends;
    const int peer_global = context_.group.global(peer);
    for (std::size_t s = 0; s < cut_.segments_of(args_.count); ++s) {
      const Piece piece = cut_.piece(args_.count, s);
      const std::byte* from = data + piece.offset * elem_;
      std::size_t bytes = piece.length * elem_;
      if (s == 0 && outbox != nullptr && carried_ > 0) {
        std::memcpy(outbox, check_->descriptor().data(), carried_);
        std::memcpy(outbox + carried_, from, bytes);
        from = outbox;
        bytes += carried_;
      }
      sends.push_back(context_.transport.send(peer_global, tag(me_, step, s), from, bytes));
    }
    return sends;
  }

  void receive_all(int step, int peer) {
    std::vector<Transport::Request> receives;
    for (std::size_t s = 0; s < cut_.segments_of(args_.count); ++s) {
      const Piece piece = cut_.piece(args_.count, s);
      receives.push_back(context_.transport.recv(context_.group.global(peer), tag(peer, step, s),
                                                 recv_ + piece.offset * elem_,
                                                 piece.length * elem_));
    }
    context_.transport.wait_all(receives);
  }

  const CollectiveContext& context_;
  const AllreduceArgs& args_;
  const std::size_t elem_;
  std::byte* recv_;
  const int me_;
  const HalvingDoublingSchedule pairs_;
  const Segmentation cut_;
  CallCheck* const check_ = context_.call_check;
  const std::size_t carried_;  // descriptor bytes ahead of a step's first piece (0: check off)
};

void recursive_doubling_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  if (trivial_allreduce(context, args)) return;
  RecursiveDoubling(context, args).run();
}

// Cost (Thakur, Rabenseifner & Gropp 2005): power of two, T = log2(p)*(alpha + M*beta + M*gamma).
// Step j pairs core ranks at distance p/2^(j+1), as run() does, with link class and NIC sharing
// priced per step. The fold costs alpha + M*beta + M*gamma before the core and alpha + M*beta
// after it.
std::optional<model::Prediction> recursive_doubling_cost(const model::CostParams& params,
                                                         const model::Shape& shape, double m,
                                                         const Tuning&) {
  return doubling_cost("recursive_doubling", DoublingVolume::whole, params, shape, m);
}

const AlgorithmRegistration kRecursiveDoubling(
    {.name = "recursive_doubling",
     .run = recursive_doubling_allreduce,
     .summary = "pairs at doubling distance swap and add their whole vectors; log2(n) steps, "
                "for small messages",
     .order = 27,  // after direct: at 2 ranks both are one exchange, and direct's needs no copy
     .cost = recursive_doubling_cost,
     .carries_call_check = true,
     .compares_calls = true});

}  // namespace
}  // namespace coll
