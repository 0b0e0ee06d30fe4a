#include "coll/tools/core_binding.hpp"

#include <string>

#include "coll/env.hpp"
#include "coll/error.hpp"

namespace coll::tools {

RankPinning RankPinning::from_env() {
  const std::string value = env_string("COLL_BIND").value_or("core");
  RankPinning pinning;
  if (value == "none") return pinning;
  if (value != "core") {
    throw Error(Status::InvalidArgument,
                "COLL_BIND='" + value + "': expected core (pin each rank to a core) or none");
  }
  cpu_set_t allowed;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
    throw_system_error("reading the CPUs this launcher may run on");
  }
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    pinning.cores_.push_back(one);
  }
  return pinning;
}

const cpu_set_t* RankPinning::core_of(int rank) const {
  if (cores_.empty()) return nullptr;
  return &cores_[static_cast<std::size_t>(rank) % cores_.size()];
}

}  // namespace coll::tools
