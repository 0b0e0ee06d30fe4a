// A tool's --json (or --trace) output, parsed: tests check fields, not the printed text.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace coll::testing {

// The document in `path`; a missing or malformed file is a parse error (nlohmann throws).
inline nlohmann::json read_json(const std::string& path) {
  std::ifstream file(path);
  return nlohmann::json::parse(file);
}

}  // namespace coll::testing
