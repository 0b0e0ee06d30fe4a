// Rabenseifner's all-reduce: recursive-halving reduce-scatter, then recursive-doubling
// all-gather, over the largest power of two p <= n ranks. Each rank sends 2(p-1)/p of the data
// in 2 log2(p) steps. With r = n - p, the first 2r ranks pair up first: each even one hands its
// whole vector to its odd partner and sits out, and gets the result back at the end.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/doubling_cost.hpp"
#include "algorithms/halving_doubling_schedule.hpp"
#include "algorithms/partition.hpp"
#include "algorithms/pipeline.hpp"
#include "algorithms/registry.hpp"
#include "reduce/reducer.hpp"

namespace coll {

namespace {

class HalvingDoubling {
 public:
  HalvingDoubling(const CollectiveContext& context, const AllreduceArgs& args)
      : context_(context),
        args_(args),
        elem_(dtype_size(args.type)),
        send_(static_cast<const std::byte*>(args.send)),
        recv_(static_cast<std::byte*>(args.recv)),
        n_(context.group.size()),
        me_(context.group.me),
        pairs_(n_),
        // Message index = step * segments + segment, for 2 log2(p) + 2 steps.
        cut_(Segmentation::of(context, elem_, args.count, 2 * std::size_t(pairs_.steps()) + 2)) {}

  void run() {
    const int steps = pairs_.steps();
    const int post_step = 2 * steps + 1;
    if (pairs_.folds(me_)) {
      const int partner = pairs_.fold_partner(me_);
      if (pairs_.sits_out(me_)) {  // hand over the whole vector, wait for the result
        exchange_reduce(0, partner, send_, args_.count, 0, 0);
        exchange(post_step, partner, nullptr, 0, recv_, args_.count);
        return;
      }
      exchange_reduce(0, partner, nullptr, 0, 0, args_.count);
      source_ = recv_;
    }
    const int rank = pairs_.core_rank(me_);
    const int power = pairs_.power();
    const Partition blocks(args_.count, static_cast<std::size_t>(power));
    auto at = [&](int block) { return blocks.offset(static_cast<std::size_t>(block)); };

    // Reduce-scatter: each step keeps the half of [low, high) that holds block `rank`.
    int low = 0;
    int high = power;
    for (int step = 0; step < steps; ++step) {
      const int distance = pairs_.distance(step);
      const int middle = low + (high - low) / 2;
      const bool lower = (rank & distance) == 0;
      const int give_low = lower ? middle : low;
      const int give_high = lower ? high : middle;
      if (lower)
        high = middle;
      else
        low = middle;
      exchange_reduce(1 + step, pairs_.partner(rank, step), source_ + at(give_low) * elem_,
                      at(give_high) - at(give_low), at(low), at(high) - at(low));
      source_ = recv_;
    }
    if (args_.op == ReduceOp::Avg) {
      finish_average(args_.type, recv_ + at(low) * elem_, at(high) - at(low), n_);
    }

    // All-gather: the same pairs in reverse order swap what they hold, doubling it each step.
    for (int step = steps - 1; step >= 0; --step) {
      const int distance = pairs_.distance(step);
      const int width = high - low;
      const bool lower = (rank & distance) == 0;
      const int take_low = lower ? high : low - width;
      exchange(2 * steps - step, pairs_.partner(rank, step), recv_ + at(low) * elem_,
               at(high) - at(low), recv_ + at(take_low) * elem_,
               at(take_low + width) - at(take_low));
      low = std::min(low, take_low);
      high = low + 2 * width;
    }

    if (pairs_.folds(me_)) {
      exchange(post_step, pairs_.fold_partner(me_), recv_, args_.count, nullptr, 0);
    }
  }

 private:
  std::uint32_t tag_index(int step, std::size_t segment) const {
    return static_cast<std::uint32_t>(std::size_t(step) * cut_.segments() + segment);
  }

  // Sends `give` elements from `give_data` to `peer` and reduces what it sends back into
  // recv[keep_offset, + keep_length), segment by segment, from pooled staging slots.
  void exchange_reduce(int step, int peer, const std::byte* give_data, std::size_t give,
                       std::size_t keep_offset, std::size_t keep_length) {
    Transport& transport = context_.transport;
    const int peer_global = context_.group.global(peer);
    const int me_global = context_.group.global(me_);
    std::vector<Transport::Request> sends;
    for (std::size_t s = 0; s < cut_.segments_of(give); ++s) {
      const Piece piece = cut_.piece(give, s);
      sends.push_back(transport.send(peer_global, context_.tags.make(me_global, tag_index(step, s)),
                                     give_data + piece.offset * elem_, piece.length * elem_));
    }
    const std::size_t segments = cut_.segments_of(keep_length);
    if (segments == 0) {
      transport.wait_all(sends);
      return;
    }
    const std::size_t window = window_of(context_.tuning);
    const std::size_t slot_bytes = cut_.elems() * elem_;
    auto staging = context_.pool.acquire(window * slot_bytes);
    std::vector<Transport::Request> receives(segments);
    auto slot = [&](std::size_t s) { return staging.data() + (s % window) * slot_bytes; };
    auto post = [&](std::size_t s) {
      receives[s] = transport.recv(peer_global, context_.tags.make(peer_global, tag_index(step, s)),
                                   slot(s), cut_.piece(keep_length, s).length * elem_);
    };
    auto finish = [&](std::size_t s) {
      transport.wait(receives[s]);
      const Piece piece = cut_.piece(keep_length, s);
      const std::size_t offset = (keep_offset + piece.offset) * elem_;
      // Fixed order, whoever is faster: the lower group index's data first.
      const std::byte* first = peer < me_ ? slot(s) : source_ + offset;
      const std::byte* second = peer < me_ ? source_ + offset : slot(s);
      context_.reduce(args_.type, args_.op, recv_ + offset, first, second, piece.length);
    };
    run_windowed(segments, window, post, finish);
    transport.wait_all(sends);
  }

  // Sends and receives one message each (either may be empty): nothing to reduce.
  void exchange(int step, int peer, const std::byte* give_data, std::size_t give,
                std::byte* take_data, std::size_t take) {
    Transport& transport = context_.transport;
    const int peer_global = context_.group.global(peer);
    Transport::Request requests[2];
    std::size_t posted = 0;
    if (give > 0) {
      requests[posted++] = transport.send(
          peer_global, context_.tags.make(context_.group.global(me_), tag_index(step, 0)),
          give_data, give * elem_);
    }
    if (take > 0) {
      requests[posted++] =
          transport.recv(peer_global, context_.tags.make(peer_global, tag_index(step, 0)),
                         take_data, take * elem_);
    }
    transport.wait_all(std::span<Transport::Request>(requests, posted));
  }

  const CollectiveContext& context_;
  const AllreduceArgs& args_;
  const std::size_t elem_;
  const std::byte* send_;
  std::byte* recv_;
  const std::byte* source_ = send_;  // this rank's contribution: the input until it is reduced
  const int n_;
  const int me_;
  const HalvingDoublingSchedule pairs_;
  const Segmentation cut_;
};

void halving_doubling_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  if (trivial_allreduce(context, args)) return;
  HalvingDoubling(context, args).run();
}

// Cost (Thakur, Rabenseifner & Gropp 2005): power of two,
// T = 2 log2(p)*alpha + 2(p-1)/p*M*beta + (p-1)/p*M*gamma. As run() does, reduce-scatter step j
// pairs core ranks at distance p/2^j and moves M/2^j (largest distance first) and the all-gather
// mirrors it; link class and NIC sharing are priced per step, so on contiguous nodes the first
// (largest) steps cross nodes. The fold costs alpha + M*beta + M*gamma before the core and
// alpha + M*beta after it.
std::optional<model::Prediction> halving_doubling_cost(const model::CostParams& params,
                                                       const model::Shape& shape, double m,
                                                       const Tuning&) {
  return doubling_cost("halving_doubling", DoublingVolume::halving, params, shape, m);
}

const AlgorithmRegistration kHalvingDoubling(
    {.name = "halving_doubling",
     .run = halving_doubling_allreduce,
     .summary = "Rabenseifner: recursive-halving reduce-scatter, recursive-doubling all-gather; "
                "2 log2(n) steps",
     .order = 20,
     .cost = halving_doubling_cost});

}  // namespace
}  // namespace coll
