// Layer-pipelined replay of a training iteration: backward is emulated layer by layer (the rank
// waits, as a GPU would compute while the CPU stays free), and each fusion bucket's all-reduce is
// queued on the communicator's progress engine as soon as its last gradient is ready
// (--overlap), or all after backward (without it). Reports exposed communication, the hidden
// fraction and the cost model's replay of the same iteration next to the measurement.
#pragma once

#include "coll/comm.hpp"
#include "options.hpp"

namespace collbench {

// Runs on every rank; rank 0 prints and writes JSON / the trace. Returns the wrong elements.
std::size_t run_iteration_replay(coll::Comm& comm, const ReplayOptions& replay,
                                 const SweepOptions& sweep);

}  // namespace collbench
