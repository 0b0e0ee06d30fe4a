// The prices peer_read's cost formula puts on cache lines, measured in the build VM (where, is
// said beside each), by name so that tests and docs refer to them rather than copy them.
#pragma once

#include <cstddef>

namespace coll::peer_read_prices {

inline constexpr std::size_t kLineBytes = 64;  // a cache line

// In place, the peers' parts of this rank's block are lines their cores wrote in the last call's
// copy round, so each crosses cores on its way to the reduction. Measured at 2 ranks in the build
// VM, in place against out of place, per line of the peers' share: 3.2-6.6 ns at 16-256 KiB in the
// slow phase (timed hand-off 0.28 us), 2.7-3.6 ns at 16-64 KiB in the fast one (0.06-0.10 us):
// the hand-off, a polled round trip, moved 3-4.7x between the phases and a line crossing barely,
// so a line is priced alone. In the fast phase the extra time stopped growing at 128 KiB of the
// peers' share (2.3-3.6 us at 256 KiB vectors, 1.2 at 1 MiB): the older lines have left the
// peers' private caches. In the slow phase it kept growing (21 us at 1 MiB), which the cap
// misses without changing a choice there: shm's slot rounds cost more in that phase too.
inline constexpr double kLineCrossingSeconds = 4.4e-9;
inline constexpr double kCrossingLinesAtMostBytes = 128 * 1024;

}  // namespace coll::peer_read_prices
