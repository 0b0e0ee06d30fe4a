#include "json_writer.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>

#include "coll/error.hpp"
#include "core/json_string.hpp"

namespace collbench {
namespace {

std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

}  // namespace

void JsonWriter::prefix(std::string_view key) {
  if (!first_.empty()) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
  }
  if (!key.empty()) out_ += coll::json_quoted(key) + ":";
}

JsonWriter& JsonWriter::begin_object(std::string_view key) {
  prefix(key);
  out_ += "{";
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_ += "}";
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array(std::string_view key) {
  prefix(key);
  out_ += "[";
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_ += "]";
  first_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, std::string_view value) {
  prefix(key);
  out_ += coll::json_quoted(value);
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, double value) {
  prefix(key);
  out_ += number(value);
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, long long value) {
  prefix(key);
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, bool value) {
  prefix(key);
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::element(double value) {
  prefix({});
  out_ += number(value);
  return *this;
}

void JsonWriter::save(const std::string& path) const {
  std::ofstream file(path);
  file << out_ << '\n';
  if (!file) throw coll::Error(coll::Status::SystemError, "cannot write JSON to '" + path + "'");
}

}  // namespace collbench
