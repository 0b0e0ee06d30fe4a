// How the cost model prices one step of an algorithm: a set of concurrent flows, each carrying
// the same bytes. Intra-node flows cost alpha_intra + b*intra_beta(h) (one port per rank; h =
// the most intra-node flows of one node in the step, which share the node's host staging path
// when the parameters have one, e.g. the p40-ib56 preset).
// Inter-node flows share their node's NIC: with f the most flows entering or leaving one node
// in the step, they cost alpha_inter + f*b*beta_inter. The step lasts as long as its slower
// class (a pipeline spanning nodes is bounded by its slowest link, as in NCCL's tuning model).
#pragma once

#include <utility>
#include <vector>

#include "coll/model/link_params.hpp"
#include "coll/model/shape.hpp"

namespace coll::model {

using Flows = std::vector<std::pair<int, int>>;  // (from rank, to rank)

struct StepCost {
  double latency = 0;
  double bandwidth = 0;
  bool inter = false;  // the inter-node flows are the slower class
};

StepCost step_cost(const CostParams& params, const Shape& shape, const Flows& flows, double bytes);

// Seconds per byte of each of `flows` concurrent intra-node flows of one node:
// max(beta_intra, flows * staging_beta) (CostParams::staging_beta_s_per_byte).
double intra_beta(const CostParams& params, int flows);

}  // namespace coll::model
