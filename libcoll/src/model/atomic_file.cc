#include "model/atomic_file.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "coll/error.hpp"

namespace coll::model {

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what) {
  const std::filesystem::path file(path);
  std::error_code error;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), error);
  if (error) {
    throw Error(Status::SystemError,
                "cannot create the directory of " + what + " " + path + ": " + error.message());
  }
  const std::string temporary = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out.flush()) throw_system_error("cannot write " + what + " " + temporary);
  }
  std::filesystem::rename(temporary, file, error);
  if (error)
    throw Error(Status::SystemError, "cannot write " + what + " " + path + ": " + error.message());
}

}  // namespace coll::model
