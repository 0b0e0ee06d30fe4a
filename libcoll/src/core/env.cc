#include "coll/env.hpp"

#include <cctype>
#include <cstdlib>
#include <string>

#include "coll/error.hpp"

namespace coll {

std::optional<std::string> env_string(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_RANK") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

std::optional<long long> parse_size(const std::string& text) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string suffix = text.substr(used);
  if (suffix == "B" || suffix == "b") suffix.clear();
  long long scale = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB" || suffix == "KB") {
    scale = 1LL << 10;
  } else if (suffix == "M" || suffix == "m" || suffix == "MiB" || suffix == "MB") {
    scale = 1LL << 20;
  } else if (suffix == "G" || suffix == "g" || suffix == "GiB" || suffix == "GB") {
    scale = 1LL << 30;
  } else if (!suffix.empty()) {
    return std::nullopt;
  }
  if (value < 0 || value > (1LL << 62) / scale) return std::nullopt;
  return value * scale;
}

long long parse_integer_setting(std::string_view name, const std::string& text, long long min,
                                long long max, bool allow_suffix) {
  std::optional<long long> value;
  if (allow_suffix) {
    value = parse_size(text);
  } else {
    try {
      std::size_t used = 0;
      value = std::stoll(text, &used);
      if (used != text.size()) value.reset();
    } catch (const std::exception&) {
      value.reset();
    }
  }
  if (!value || *value < min || *value > max) {
    throw Error(Status::InvalidArgument, std::string(name) + "='" + text +
                                             "' is not an integer in [" + std::to_string(min) +
                                             ", " + std::to_string(max) + "]");
  }
  return *value;
}

std::optional<long long> env_integer(const char* name, long long min, long long max,
                                     bool allow_suffix) {
  const auto text = env_string(name);
  if (!text) return std::nullopt;
  return parse_integer_setting(name, *text, min, max, allow_suffix);
}

std::optional<double> env_seconds(const char* name) {
  const auto text = env_string(name);
  if (!text) return std::nullopt;
  try {
    std::size_t used = 0;
    const double value = std::stod(*text, &used);
    if (used == text->size() && value > 0) return value;
  } catch (const std::exception&) {
  }
  throw Error(Status::InvalidArgument,
              std::string(name) + "='" + *text + "' is not a positive number of seconds");
}

}  // namespace coll
