// The cluster clock (emulator/cluster_clock.hpp) as the runtime's CostClock: what the shaped
// links bring to the communicator that runs over them.
#pragma once

#include "core/cost_clock.hpp"

namespace coll::emulator {

CostClock& cluster_cost_clock();

}  // namespace coll::emulator
