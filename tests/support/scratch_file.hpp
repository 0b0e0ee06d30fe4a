// A path for a file one test writes (a --json report, a fake program): the process id in its name
// keeps parallel ctest runs, and other checkouts testing on the same machine, from sharing it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace coll::testing {

class ScratchFile {
 public:
  explicit ScratchFile(const std::string& name)
      : path_(std::filesystem::path(::testing::TempDir()) /
              (std::to_string(::getpid()) + "_" + name)) {}
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() { std::remove(path_.c_str()); }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace coll::testing
