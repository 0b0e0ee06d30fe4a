#include "coll/error.hpp"

#include <cerrno>
#include <cstring>

namespace coll {

void throw_system_error(const std::string& what) {
  const int saved = errno;
  throw Error(Status::SystemError, what + ": " + std::strerror(saved));
}

}  // namespace coll
