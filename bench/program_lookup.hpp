// How collrun finds the program to run, as a shell or mpirun would: a name with a slash is a
// path, any other name is looked up in PATH.
#pragma once

#include <string>

namespace collbench {

// The path to execute for `program`. Throws coll::Error (InvalidArgument) with a one-line
// message naming the program and the reason it cannot be started (not found in PATH, no such
// file, permission denied, a directory) before any rank is started.
std::string find_program(const std::string& program);

}  // namespace collbench
