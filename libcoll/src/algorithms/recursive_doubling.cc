// Recursive doubling: log2(p) steps over the largest power of two p <= n ranks, in each of which
// a pair swaps its whole partial sum and both add the two, the lower member's first, so every
// rank ends with the same bits. Latency-optimal for small vectors (log2 p steps where
// halving-doubling takes 2 log2 p and the ring 2(n-1)); each rank sends log2(p) whole vectors,
// so large ones belong to the ring. Open MPI's tuned all-reduce uses it for short messages too.
// Ranks past the power of two fold in as in halving-doubling (halving_doubling_schedule.hpp).
// It carries the argument check without a round or a peer of its own: each pair swaps call
// descriptors before its first sum, and agreement along every edge of the hypercube (and the
// fold) is agreement of all. A rank that runs another algorithm sends its check to the next rank
// instead of joining: a wait that is slow looks for that message (CallCheck::poll_message).
#include <array>
#include <vector>

#include "algorithms/doubling_cost.hpp"
#include "algorithms/halving_doubling_schedule.hpp"
#include "algorithms/pipeline.hpp"
#include "algorithms/registry.hpp"
#include "reduce/reducer.hpp"
#include "transport/node_slots.hpp"

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
        // Message index = step * segments + segment: the fold, log2(p) steps, the result back;
        // then one descriptor per step (one more step's worth of room).
        cut_(Segmentation::of(context, elem_, args.count, std::size_t(pairs_.steps()) + 3)) {}

  void run() {
    const auto* source = static_cast<const std::byte*>(args_.send);
    const int last_step = pairs_.steps() + 1;
    if (check_ != nullptr) check_->compared_all();  // by the pairs, below
    if (pairs_.folds(me_)) {
      const int partner = pairs_.fold_partner(me_);
      if (pairs_.sits_out(me_)) {  // hand over the whole vector, wait for the result
        send_descriptor(0, partner);
        send_all(0, partner, source);
        receive_all(last_step, partner);
        context_.transport.wait_all(descriptor_sends_);
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
    if (pairs_.folds(me_)) send_all(last_step, pairs_.fold_partner(me_), recv_);
    context_.transport.wait_all(descriptor_sends_);
  }

 private:
  Tag tag(int from, int step, std::size_t segment) const {
    return context_.tags.make(
        context_.group.global(from),
        static_cast<std::uint32_t>(std::size_t(step) * cut_.segments() + segment));
  }
  Tag descriptor_tag(int from, int step) const {
    return tag(from, pairs_.steps() + 2, static_cast<std::size_t>(step));
  }

  // With the check on, sent ahead of the step's data, so it arrives (and is compared) first.
  void send_descriptor(int step, int peer) {
    if (check_ == nullptr) return;
    const std::span<const std::byte> mine = check_->descriptor();
    descriptor_sends_.push_back(context_.transport.send(
        context_.group.global(peer), descriptor_tag(me_, step), mine.data(), mine.size()));
  }

  // Waits for `data` from `peer`; with the check on, its descriptor first (compared with this
  // rank's as it arrives), and a slow wait also looks for a check message from the previous rank.
  class Arrival final : public WaitCondition {
   public:
    Arrival(RecursiveDoubling& algorithm, int step, int peer, Transport::Request& data)
        : algorithm_(algorithm), peer_(peer), data_(data) {
      CallCheck& check = *algorithm.check_;
      descriptor_ = algorithm.context_.transport.recv(algorithm.context_.group.global(peer),
                                                      algorithm.descriptor_tag(peer, step),
                                                      theirs_.data(), check.descriptor().size());
    }
    std::size_t missing() override {
      Transport& transport = algorithm_.context_.transport;
      transport.progress();
      if (!compared_) {
        if (!transport.test(descriptor_)) return 2;
        compared_ = true;
        const CallCheck& check = *algorithm_.check_;
        algorithm_.check_->compare(
            algorithm_.context_.group.global(peer_), {theirs_.data(), check.descriptor().size()},
            algorithm_.context_.group.global(algorithm_.me_), check.descriptor());
      }
      return transport.test(data_) ? 0 : 1;
    }
    int peer() const override { return algorithm_.context_.group.global(peer_); }
    void check_slow() override { algorithm_.check_->poll_message(); }

   private:
    RecursiveDoubling& algorithm_;
    const int peer_;
    Transport::Request& data_;
    Transport::Request descriptor_;
    std::array<std::byte, NodeSlots::kDescriptorBytes> theirs_{};
    bool compared_ = false;
  };

  // The first receive of a step from `peer`: with the check on, as an Arrival.
  void await_first(int step, int peer, Transport::Request& data) {
    if (check_ == nullptr) return context_.transport.wait(data);
    Arrival arrival(*this, step, peer, data);
    context_.transport.wait_for(arrival);
  }

  // Sends `give` (null: nothing) to `peer`, receives its vector and writes mine + its (the lower
  // member's first) to recv, segment by segment from pooled staging slots. `give` and `mine`
  // may be recv itself: a segment is overwritten only once its send has completed.
  void combine(int step, int peer, const std::byte* give, const std::byte* mine) {
    Transport& transport = context_.transport;
    const int peer_global = context_.group.global(peer);
    const std::size_t segments = cut_.segments_of(args_.count);
    std::vector<Transport::Request> sends;
    if (give != nullptr) {
      send_descriptor(step, peer);
      for (std::size_t s = 0; s < segments; ++s) {
        const Piece piece = cut_.piece(args_.count, s);
        sends.push_back(transport.send(peer_global, tag(me_, step, s), give + piece.offset * elem_,
                                       piece.length * elem_));
      }
    }
    const std::size_t window = window_of(context_.tuning);
    const std::size_t slot_bytes = cut_.elems() * elem_;
    auto staging = context_.pool.acquire(window * slot_bytes);
    std::vector<Transport::Request> receives(segments);
    auto slot = [&](std::size_t s) { return staging.data() + (s % window) * slot_bytes; };
    auto post = [&](std::size_t s) {
      receives[s] = transport.recv(peer_global, tag(peer, step, s), slot(s),
                                   cut_.piece(args_.count, s).length * elem_);
    };
    auto finish = [&](std::size_t s) {
      if (s == 0) {
        await_first(step, peer, receives[s]);
      } else {
        transport.wait(receives[s]);
      }
      if (!sends.empty()) transport.wait(sends[s]);
      const Piece piece = cut_.piece(args_.count, s);
      const std::size_t offset = piece.offset * elem_;
      const std::byte* first = peer < me_ ? slot(s) : mine + offset;
      const std::byte* second = peer < me_ ? mine + offset : slot(s);
      reduce(args_.type, args_.op, recv_ + offset, first, second, piece.length);
    };
    run_windowed(segments, window, post, finish);
  }

  void send_all(int step, int peer, const std::byte* data) {
    std::vector<Transport::Request> sends;
    for (std::size_t s = 0; s < cut_.segments_of(args_.count); ++s) {
      const Piece piece = cut_.piece(args_.count, s);
      sends.push_back(context_.transport.send(context_.group.global(peer), tag(me_, step, s),
                                              data + piece.offset * elem_, piece.length * elem_));
    }
    context_.transport.wait_all(sends);
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
  std::vector<Transport::Request> descriptor_sends_;
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
     .order = 22,
     .cost = recursive_doubling_cost,
     .carries_call_check = true,
     .compares_calls = true});

}  // namespace
}  // namespace coll
