// Ring all-reduce: reduce-scatter then all-gather around the group, each rank sending
// 2(n-1)/n of the data in n equal blocks. The segmented, pipelined schedule itself lives in
// ring_phases.cc, where hierarchical also finds the two phases on their own.
//
// Cost (Patarasuk & Yuan, JPDC 2009; Thakur, Rabenseifner & Gropp, IJHPCA 2005): 2(p-1) steps
// of M/p bytes over the ring's links in rank order, each step as slow as its slowest link:
//   T = 2(p-1)*alpha + 2(p-1)/p*M*beta + (p-1)/p*M*gamma, (alpha, f*beta) of the slowest link.
#include <vector>

#include "algorithms/partition.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/ring_phases.hpp"
#include "model/link_model.hpp"

namespace coll {
namespace {

void ring_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  const auto n = static_cast<std::size_t>(context.group.size());
  const Partition blocks(args.count, n);
  std::vector<std::size_t> bounds(n + 1);
  for (std::size_t b = 0; b <= n; ++b) bounds[b] = b < n ? blocks.offset(b) : args.count;
  ring_reduce_scatter_all_gather(context, args, bounds);
}

std::optional<model::Prediction> ring_cost(const model::CostParams& params,
                                           const model::Shape& shape, double m, const Tuning&) {
  model::Prediction out{"ring"};
  const int p = shape.ranks;
  if (p < 2) return out;
  model::Flows flows;
  for (int r = 0; r < p; ++r) flows.emplace_back(r, (r + 1) % p);
  const model::StepCost step = model::step_cost(params, shape, flows, m / p);
  out.latency_s = 2.0 * (p - 1) * step.latency;
  out.bandwidth_s = 2.0 * (p - 1) * step.bandwidth;
  out.reduction_s = (p - 1.0) / p * m * params.gamma_s_per_byte;
  out.detail = model::detail_text("2(p-1)=%d steps of M/p on the %s link", 2 * (p - 1),
                                  step.inter ? "inter-node" : "intra-node");
  return out;
}

const AlgorithmRegistration kRing({.name = "ring",
                                   .run = ring_allreduce,
                                   .summary = "reduce-scatter then all-gather around a ring; "
                                              "bandwidth-optimal, 2(n-1) latency steps",
                                   .order = 0,
                                   .cost = ring_cost});

}  // namespace
}  // namespace coll
