// Synthetic cost parameters for the cost model's tests: one link class everywhere, inside and
// between nodes.
#pragma once

#include "coll/model/link_params.hpp"

namespace coll::testing {

inline coll::model::CostParams flat(double alpha = 1e-6, double beta = 1e-10,
                                    double gamma = 5e-11) {
  return {{{alpha, beta}, {alpha, beta}, gamma, "synthetic flat"}};
}

}  // namespace coll::testing
