#include "models_dir.hpp"

#include <filesystem>
#include <system_error>

namespace collbench {

std::string default_models_dir() {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path executable_dir = fs::read_symlink("/proc/self/exe", error).parent_path();
  const fs::path installed = executable_dir / ".." / "share" / "coll" / "models";
  if (!error && fs::is_directory(installed, error)) return installed.lexically_normal().string();
  return (executable_dir / COLL_MODELS_RELATIVE_DIR).lexically_normal().string();
}

}  // namespace collbench
