#include "coll/tools/json_writer.hpp"

#include <cmath>
#include <fstream>

#include "coll/error.hpp"

namespace coll::tools {
namespace {

nlohmann::ordered_json number(double value) {
  if (!std::isfinite(value)) return nullptr;  // JSON has no NaN or infinity
  return value;
}

}  // namespace

nlohmann::ordered_json& JsonWriter::add(std::string_view key, nlohmann::ordered_json value) {
  if (open_.empty()) {
    document_ = std::move(value);
    return document_;
  }
  nlohmann::ordered_json& parent = *open_.back();
  if (parent.is_array()) {
    parent.push_back(std::move(value));
    return parent.back();
  }
  nlohmann::ordered_json& slot = parent[std::string(key)];
  slot = std::move(value);
  return slot;
}

JsonWriter& JsonWriter::open(std::string_view key, nlohmann::ordered_json empty_container) {
  open_.push_back(&add(key, std::move(empty_container)));
  return *this;
}

JsonWriter& JsonWriter::close() {
  open_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, std::string_view value) {
  add(key, std::string(value));
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, double value) {
  add(key, number(value));
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, long long value) {
  add(key, value);
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, bool value) {
  add(key, value);
  return *this;
}

JsonWriter& JsonWriter::element(double value) {
  add({}, number(value));
  return *this;
}

JsonWriter& JsonWriter::element(long long value) {
  add({}, value);
  return *this;
}

void JsonWriter::save(const std::string& path) const {
  std::ofstream file(path);
  file << text() << '\n';
  if (!file) throw coll::Error(coll::Status::SystemError, "cannot write JSON to '" + path + "'");
}

}  // namespace coll::tools
