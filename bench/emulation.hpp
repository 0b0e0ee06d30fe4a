// collbench --paper-tables --emulate: the paper's cells measured on this machine over links that
// behave like the preset's (the shaped transport, COLL_TRANSPORT=shaped:ucx with COLL_SHAPE from
// the preset's alpha, beta and staging path), each strategy's training iteration replayed with
// its compute profile, links and compute slowed by --time-scale K and times divided by K; the
// cost model's cell beside each measurement, their deviation, and a one-line warning for every
// cell where this machine cannot emulate faithfully (docs/emulation.md).
#pragma once

#include <string>

#include "options.hpp"
#include "study/paper_tables.hpp"

namespace collbench {

struct EmulatedCell {
  coll::study::TableCell model;                         // the cost model's cell
  double comm_ms = 0, exposed_ms = 0, backward_ms = 0;  // measured, divided by K
  double cpu_load = 0;  // estimated share of this machine's cores the emulation needs
  std::string warning;  // why this cell is not faithful ("" = faithful as far as known)
  std::string error;    // the run failed: its last line of output
};

// The COLL_SHAPE text of `params` slowed by `time_scale`.
std::string shape_of(const coll::model::CostParams& params, double time_scale);

// What limits emulation on this machine: its cores, their load by other work (the 1-minute load
// average before the run) and how late a thread wakes from a short sleep (median of a few
// 200 us sleeps).
struct MachineLimits {
  int cores = 1;
  double others_load = 0;
  double wake_s = 0;
  static MachineLimits measure();
};

// Why emulating `cell` (its model's gradients: `gradient_bytes`) at `time_scale` on `machine`
// would not be faithful, or ""; sets its estimated CPU load (share of the cores) in `load`.
std::string emulation_warning(const coll::study::TableCell& cell, double gradient_bytes,
                              double time_scale, const MachineLimits& machine, double& load);

// On the virtual clock a link several ranks share serves them first come (docs/emulation.md,
// limit 6), so a rank served early starts hierarchical's inter-node phase while the others of its
// node still use the intra-node path, which a testbed whose links share fairly (the model's
// assumption) does not let it. Why that
// could take the cell's emulation more than 15 % below the model (the room for it,
// coll::study::TableCell::phase_overlap_ms, exceeds 15 % of its communication), or "".
std::string first_come_warning(double room_ms, const coll::study::TableCell& cell);

// Runs the selected cells, prints the markdown (and --json); returns the exit status.
int run_emulated_tables(const Command& command);

}  // namespace collbench
