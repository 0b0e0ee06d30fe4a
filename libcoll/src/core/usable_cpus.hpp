// How many CPUs this process's host may really give its ranks: the online CPUs, or fewer where a
// cgroup's CPU quota (a container's, a pod's) caps them. Affinity is left out: a launcher that
// pins each rank to its own core leaves the host's cores to the ranks together.
#pragma once

namespace coll {

// Read once per process.
long usable_cpus();

}  // namespace coll
