// The price of the two algorithms over HalvingDoublingSchedule's pairs, priced step by step with
// each step's link class and NIC sharing: the fold (alpha + M*beta + M*gamma), the core steps, and
// the result handed back (alpha + M*beta).
#pragma once

#include <string_view>

#include "coll/model/link_params.hpp"
#include "coll/model/prediction.hpp"
#include "coll/model/shape.hpp"

namespace coll {

enum class DoublingVolume {
  // Halving-doubling: core step j moves M/2^(j+1) in the reduce-scatter (reduced) and again in
  // the all-gather.
  halving,
  // Recursive doubling: every core step moves and reduces the whole vector, once.
  whole,
};

model::Prediction doubling_cost(std::string_view name, DoublingVolume volume,
                                const model::CostParams& params, const model::Shape& shape,
                                double m);

}  // namespace coll
