// The prices peer_read's cost formula puts on cache lines, by name so that tests and docs refer to
// them rather than copy them: defaults for any host, measured on one (docs/tuning.md, "Constants
// measured on the build VM").
#pragma once

#include <cstddef>

namespace coll::peer_read_prices {

inline constexpr std::size_t kLineBytes = 64;  // a cache line

// In place, the peers' parts of this rank's block are lines their cores wrote in the last call's
// copy round, so each crosses cores on its way to the reduction: a price per line of the peers'
// share (in place against out of place), which moved little where the timed hand-off, a polled
// round trip, moved severalfold, so a line is priced alone. Past a share of about 128 KiB the
// extra time stops growing: the older lines have left the peers' private caches.
inline constexpr double kLineCrossingSeconds = 4.4e-9;
inline constexpr double kCrossingLinesAtMostBytes = 128 * 1024;

// A plain input up to this size is copied into memory the peers map (NodeResources::staging), so
// that they load from it as from allocate_shared's buffers instead of reading it with a system
// call each: up to about this size the copy costs less than the calls' page pinning and kernel
// copies; past it, the extra pass over memory costs more (4 ranks: 1 MiB 594 -> 262 us, 4 MiB
// level, 16 MiB 12.1 -> 17.8 ms; docs/tuning.md, "Constants measured on the build VM").
inline constexpr std::size_t kStageAtMostBytes = 4 << 20;

}  // namespace coll::peer_read_prices
