#include "program_lookup.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "coll/error.hpp"

namespace collbench {
namespace {

// 0 when `path` is an executable regular file, else the errno that exec would give.
int unusable(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return errno;
  if (S_ISDIR(info.st_mode)) return EISDIR;
  if (!S_ISREG(info.st_mode) || ::access(path.c_str(), X_OK) != 0) return EACCES;
  return 0;
}

[[noreturn]] void cannot_start(const std::string& program, const std::string& reason) {
  throw coll::Error(coll::Status::InvalidArgument, "cannot start '" + program + "': " + reason);
}

}  // namespace

std::string find_program(const std::string& program) {
  if (program.empty()) cannot_start(program, "empty program name");
  if (program.find('/') != std::string::npos) {
    if (const int error = unusable(program)) cannot_start(program, std::strerror(error));
    return program;
  }
  const char* path_variable = std::getenv("PATH");
  const std::string_view path = path_variable ? path_variable : "/usr/local/bin:/usr/bin:/bin";
  int first_error = ENOENT;  // the reason to report: a match that cannot run beats "not found"
  for (std::size_t begin = 0; begin <= path.size();) {
    std::size_t end = path.find(':', begin);
    if (end == std::string_view::npos) end = path.size();
    const std::string dir(path.substr(begin, end - begin));
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    const int error = unusable(candidate);
    if (error == 0) return candidate;
    if (error != ENOENT && first_error == ENOENT) first_error = error;
    begin = end + 1;
  }
  cannot_start(program, first_error == ENOENT
                            ? "not found in PATH"
                            : std::string(std::strerror(first_error)) + " (found in PATH)");
}

}  // namespace collbench
