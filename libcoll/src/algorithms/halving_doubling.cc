// Rabenseifner's all-reduce: recursive-halving reduce-scatter, then recursive-doubling
// all-gather, over the largest power of two p <= n ranks. Each rank sends 2(p-1)/p of the data
// in 2 log2(p) steps. With r = n - p, the first 2r ranks pair up first: each even one hands its
// whole vector to its odd partner and sits out, and gets the result back at the end.
#include <algorithm>
#include <cstring>
#include <vector>

#include "algorithms/partition.hpp"
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
        me_(context.group.me) {
    while (2 * power_ <= n_) power_ *= 2;
    while ((1 << steps_) < power_) ++steps_;
    extra_ = n_ - power_;
    // Message index = step * max_segments_ + segment, within the tag's 24 bits.
    const std::size_t step_ids = 2 * std::size_t(steps_) + 2;
    segment_ = std::max<std::size_t>(1, context.tuning.segment_bytes / elem_);
    segment_ = std::min(segment_, args.count);
    const std::size_t limit = TagSpace::kMaxMessages / step_ids;
    if ((args.count + segment_ - 1) / segment_ > limit) {
      segment_ = (args.count + limit - 1) / limit;
    }
    max_segments_ = (args.count + segment_ - 1) / segment_;
  }

  void run() {
    const int post_step = 2 * steps_ + 1;
    if (me_ < 2 * extra_) {
      const int partner = me_ ^ 1;
      if (me_ % 2 == 0) {  // hand over the whole vector, wait for the result
        exchange_reduce(0, partner, send_, args_.count, 0, 0);
        exchange(post_step, partner, nullptr, 0, recv_, args_.count);
        return;
      }
      exchange_reduce(0, partner, nullptr, 0, 0, args_.count);
      source_ = recv_;
    }
    const int rank = me_ < 2 * extra_ ? me_ / 2 : me_ - extra_;  // among the power of two
    const Partition blocks(args_.count, static_cast<std::size_t>(power_));
    auto at = [&](int block) { return blocks.offset(static_cast<std::size_t>(block)); };

    // Reduce-scatter: each step keeps the half of [low, high) that holds block `rank`.
    int low = 0;
    int high = power_;
    for (int step = 0; step < steps_; ++step) {
      const int distance = power_ >> (step + 1);
      const int middle = low + (high - low) / 2;
      const bool lower = (rank & distance) == 0;
      const int give_low = lower ? middle : low;
      const int give_high = lower ? high : middle;
      if (lower)
        high = middle;
      else
        low = middle;
      exchange_reduce(1 + step, index_of(rank ^ distance), source_ + at(give_low) * elem_,
                      at(give_high) - at(give_low), at(low), at(high) - at(low));
      source_ = recv_;
    }
    if (args_.op == ReduceOp::Avg) {
      finish_average(args_.type, recv_ + at(low) * elem_, at(high) - at(low), n_);
    }

    // All-gather: the same pairs in reverse order swap what they hold, doubling it each step.
    for (int step = steps_ - 1; step >= 0; --step) {
      const int distance = power_ >> (step + 1);
      const int width = high - low;
      const bool lower = (rank & distance) == 0;
      const int take_low = lower ? high : low - width;
      exchange(2 * steps_ - step, index_of(rank ^ distance), recv_ + at(low) * elem_,
               at(high) - at(low), recv_ + at(take_low) * elem_,
               at(take_low + width) - at(take_low));
      low = std::min(low, take_low);
      high = low + 2 * width;
    }

    if (me_ < 2 * extra_) exchange(post_step, me_ ^ 1, recv_, args_.count, nullptr, 0);
  }

 private:
  int index_of(int rank) const { return rank < extra_ ? 2 * rank + 1 : rank + extra_; }

  std::uint32_t tag_index(int step, std::size_t segment) const {
    return static_cast<std::uint32_t>(std::size_t(step) * max_segments_ + segment);
  }

  // Sends `give` elements from `give_data` to `peer` and reduces what it sends back into
  // recv[keep_offset, + keep_length), segment by segment, from pooled staging slots.
  void exchange_reduce(int step, int peer, const std::byte* give_data, std::size_t give,
                       std::size_t keep_offset, std::size_t keep_length) {
    Transport& transport = context_.transport;
    const int peer_global = context_.group.global(peer);
    const int me_global = context_.group.global(me_);
    std::vector<Transport::Request> sends;
    for (std::size_t s = 0; s * segment_ < give; ++s) {
      const std::size_t length = std::min(segment_, give - s * segment_);
      sends.push_back(transport.send(peer_global, context_.tags.make(me_global, tag_index(step, s)),
                                     give_data + s * segment_ * elem_, length * elem_));
    }
    const std::size_t segments = (keep_length + segment_ - 1) / segment_;
    if (segments == 0) {
      transport.wait_all(sends);
      return;
    }
    const std::size_t window = static_cast<std::size_t>(std::max(1, context_.tuning.window));
    auto staging = context_.pool.acquire(window * segment_ * elem_);
    std::vector<Transport::Request> receives(segments);
    auto length_of = [&](std::size_t s) { return std::min(segment_, keep_length - s * segment_); };
    auto slot = [&](std::size_t s) { return staging.data() + (s % window) * segment_ * elem_; };
    auto post = [&](std::size_t s) {
      receives[s] = transport.recv(peer_global, context_.tags.make(peer_global, tag_index(step, s)),
                                   slot(s), length_of(s) * elem_);
    };
    for (std::size_t s = 0; s < std::min(window, segments); ++s) post(s);
    for (std::size_t s = 0; s < segments; ++s) {
      transport.wait(receives[s]);
      const std::size_t offset = (keep_offset + s * segment_) * elem_;
      // Fixed order, whoever is faster: the lower group index's data first.
      const std::byte* first = peer < me_ ? slot(s) : source_ + offset;
      const std::byte* second = peer < me_ ? source_ + offset : slot(s);
      reduce(args_.type, args_.op, recv_ + offset, first, second, length_of(s));
      if (s + window < segments) post(s + window);
    }
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
  int power_ = 1;
  int steps_ = 0;
  int extra_ = 0;
  std::size_t segment_ = 1;
  std::size_t max_segments_ = 0;
};

void halving_doubling_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  if (trivial_allreduce(context, args)) return;
  HalvingDoubling(context, args).run();
}

const AlgorithmRegistration kHalvingDoubling({"halving_doubling", halving_doubling_allreduce,
                                              "Rabenseifner: recursive-halving reduce-scatter, "
                                              "recursive-doubling all-gather; 2 log2(n) steps",
                                              20});

}  // namespace
}  // namespace coll
