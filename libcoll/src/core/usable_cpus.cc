#include "core/usable_cpus.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <string>

namespace coll {
namespace {

// The path of this process's cgroup for `controller` ("" for cgroup v2's unified hierarchy).
std::optional<std::string> cgroup_path(const std::string& controller) {
  std::ifstream file("/proc/self/cgroup");
  for (std::string line; std::getline(file, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const bool listed =
        controller.empty()
            ? controllers.empty()
            : ("," + controllers + ",").find("," + controller + ",") != std::string::npos;
    if (listed) return line.substr(second + 1);
  }
  return std::nullopt;
}

// The quota in CPUs (cgroup v2's cpu.max "QUOTA PERIOD", v1's cfs_quota_us / cfs_period_us).
std::optional<double> cpu_quota() {
  if (auto path = cgroup_path("")) {
    std::ifstream max("/sys/fs/cgroup" + *path + "/cpu.max");
    std::string quota;
    double period = 0;
    if (max >> quota >> period && quota != "max" && period > 0) return std::stod(quota) / period;
  }
  if (auto path = cgroup_path("cpu")) {
    const std::string base = "/sys/fs/cgroup/cpu" + *path;
    std::ifstream quota_file(base + "/cpu.cfs_quota_us"), period_file(base + "/cpu.cfs_period_us");
    double quota = -1, period = 0;
    if (quota_file >> quota && period_file >> period && quota > 0 && period > 0) {
      return quota / period;
    }
  }
  return std::nullopt;
}

}  // namespace

long usable_cpus() {
  static const long cpus = [] {
    long online = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
    if (auto quota = cpu_quota()) online = std::min(online, std::max(1L, long(std::ceil(*quota))));
    return online;
  }();
  return cpus;
}

}  // namespace coll
