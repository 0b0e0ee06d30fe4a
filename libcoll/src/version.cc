#include "coll/version.hpp"

namespace coll {

std::string_view library_version() {
  return kVersion;
}

}  // namespace coll
