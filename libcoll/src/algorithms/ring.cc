// Ring all-reduce: reduce-scatter then all-gather around the group, each rank sending
// 2(n-1)/n of the data in n equal blocks. The segmented, pipelined schedule itself lives in
// ring_phases.cc, where hierarchical also finds the two phases on their own.
#include <vector>

#include "algorithms/partition.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/ring_phases.hpp"

namespace coll {
namespace {

void ring_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  const auto n = static_cast<std::size_t>(context.group.size());
  const Partition blocks(args.count, n);
  std::vector<std::size_t> bounds(n + 1);
  for (std::size_t b = 0; b <= n; ++b) bounds[b] = b < n ? blocks.offset(b) : args.count;
  ring_reduce_scatter_all_gather(context, args, bounds);
}

const AlgorithmRegistration kRing({"ring", ring_allreduce,
                                   "reduce-scatter then all-gather around a ring; "
                                   "bandwidth-optimal, 2(n-1) latency steps",
                                   0});

}  // namespace
}  // namespace coll
