#include "coll/tools/core_binding.hpp"

#include <string>

#include "coll/env.hpp"
#include "coll/error.hpp"

namespace coll::tools {

bool pin_ranks_from_env() {
  const std::string value = env_string("COLL_BIND").value_or("core");
  if (value == "core") return true;
  if (value == "none") return false;
  throw Error(Status::InvalidArgument,
              "COLL_BIND='" + value + "': expected core (pin each rank to a core) or none");
}

cpu_set_t core_of_rank(int rank) {
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    throw_system_error("reading the CPUs this launcher may run on");
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  cpu_set_t pinned;
  CPU_ZERO(&pinned);
  CPU_SET(cpus[static_cast<std::size_t>(rank) % cpus.size()], &pinned);
  return pinned;
}

}  // namespace coll::tools
