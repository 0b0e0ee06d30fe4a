#include "model/parameter_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "coll/error.hpp"

namespace coll::model {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

}  // namespace

std::optional<ParameterFile> ParameterFile::read(const std::string& path,
                                                 const std::vector<std::string_view>& keys,
                                                 std::string what, std::string advice) {
  ParameterFile file;
  file.path_ = path;
  file.what_ = std::move(what);
  file.advice_ = std::move(advice);
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path)) return std::nullopt;
    file.fail(0, "cannot be read");
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const auto equals = line.find('=');
    if (equals == std::string::npos) file.fail(number, "expected 'key = value'");
    const std::string key = trim(line.substr(0, equals));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      file.fail(number, "unknown key '" + key + "'");
    }
    if (!file.values_.emplace(key, trim(line.substr(equals + 1))).second) {
      file.fail(number, "duplicate key '" + key + "'");
    }
  }
  return file;
}

std::string ParameterFile::text(const std::string& key) const {
  const auto it = values_.find(key);
  return it == values_.end() ? std::string() : it->second;
}

std::optional<double> ParameterFile::number(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || errno != 0 || !std::isfinite(value)) {
    fail(0, "'" + key + "' is '" + it->second + "', not a number");
  }
  return value;
}

double ParameterFile::positive(const std::string& key) const {
  const auto value = number(key);
  if (!value) fail(0, "missing '" + key + "'");
  if (*value <= 0) fail(0, "'" + key + "' is '" + text(key) + "', not a positive number");
  return *value;
}

double ParameterFile::non_negative(const std::string& key, double fallback) const {
  const auto value = number(key);
  if (!value) return fallback;
  if (*value < 0) fail(0, "'" + key + "' is '" + text(key) + "', not a number >= 0");
  return *value;
}

bool ParameterFile::flag(const std::string& key, bool fallback) const {
  const std::string value = text(key);
  if (value.empty()) return fallback;
  if (value != "0" && value != "1") fail(0, "'" + key + "' is '" + value + "', not 0 or 1");
  return value == "1";
}

void ParameterFile::fail(int line, const std::string& problem) const {
  throw Error(Status::InvalidArgument, what_ + " " + path_ +
                                           (line > 0 ? " line " + std::to_string(line) : "") +
                                           ": " + problem + advice_);
}

}  // namespace coll::model
