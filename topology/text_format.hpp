// printf into a std::string, for the reports colltopo builds before printing them.
#pragma once

#include <string>

namespace colltopo {

__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* format, ...);

}  // namespace colltopo
