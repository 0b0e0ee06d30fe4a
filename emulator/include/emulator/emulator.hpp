// The link emulator (coll_emulator): libcoll's transports over links shaped like another
// cluster's (docs/emulation.md). libcoll alone knows nothing of it: a program that may be asked
// for COLL_TRANSPORT=shaped:<transport> links coll_emulator and calls enable() first thing.
#pragma once

namespace coll::emulator {

// Registers the `shaped` transport wrapper (COLL_SHAPE). Its links bring the cluster clock
// (emulator/cluster_clock.hpp): a communicator over them times its queued collectives and charges
// its reductions on it; other communicators keep the steady clock. Call before making a
// communicator; calling again changes nothing.
void enable();

}  // namespace coll::emulator
