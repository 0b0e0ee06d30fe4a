// Synthetic cost parameters for the cost model's tests: one link class everywhere, inside and
// between nodes.
#pragma once

#include "coll/model/link_params.hpp"

namespace coll::testing {

inline coll::model::CostParams flat(double alpha = 1e-6, double beta = 1e-10,
                                    double gamma = 5e-11) {
  return {{{alpha, beta}, {alpha, beta}, gamma, "synthetic flat"}};
}

// One node of 4 ranks whose transfers pass a host staging path of 4e-11 s/B per flow: 4 flows at
// once move at 16e-11 s/B each, above the link's 1e-10.
inline coll::model::CostParams staged_node_params() {
  coll::model::CostParams staged = flat(2e-6, 1e-10, 0);
  staged.staging_beta_s_per_byte = 4e-11;
  return staged;
}

}  // namespace coll::testing
