// What every tool's --version prints: "collbench 0.1.0 (libcoll 0.1.0)", the tool's own version
// beside the version of the libcoll.so it loaded.
#pragma once

#include <string>
#include <string_view>

namespace coll::tools {

std::string version_line(std::string_view tool);

}  // namespace coll::tools
