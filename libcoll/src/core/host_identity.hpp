// A string that differs between machines (and between containers that share a hostname).
#pragma once

#include <string>

namespace coll {
std::string host_identity();
}
