#include "core/host_identity.hpp"

#include <unistd.h>

#include <fstream>

namespace coll {

std::string host_identity() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  std::string identity = name;
  for (const char* path : {"/etc/machine-id", "/proc/sys/kernel/random/boot_id"}) {
    std::ifstream file(path);
    std::string id;
    if (file >> id && !id.empty()) return identity + "/" + id;
  }
  return identity;
}

}  // namespace coll
