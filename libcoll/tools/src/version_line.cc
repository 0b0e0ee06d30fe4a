#include "coll/tools/version_line.hpp"

#include "coll/version.hpp"

namespace coll::tools {

std::string version_line(std::string_view tool) {
  return std::string(tool) + " " + std::string(kVersion) + " (libcoll " +
         std::string(library_version()) + ")";
}

}  // namespace coll::tools
