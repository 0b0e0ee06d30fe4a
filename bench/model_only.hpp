// --model-only: the cost model and the iteration simulator alone, for any shape, in
// milliseconds, no process launched. With --model-gradients (and --strategy or --algo/--fusion/
// --overlap) it prints the modelled training iteration; otherwise the modelled size sweep of
// every requested algorithm (time, algbw, busbw), nccl-tests' columns.
#pragma once

#include "options.hpp"

namespace collbench {

// Prints, writes --json / --trace; throws coll::Error for what cannot be modelled.
int run_model_only(const Command& command);

}  // namespace collbench
