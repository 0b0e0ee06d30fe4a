// The tools' JSON reports, built call by call (open a container, add fields, close it) so that a
// report's layout reads like the document it writes. The document is an nlohmann::ordered_json:
// fields keep the order they were written in, and nlohmann does the escaping and number output
// (non-finite numbers become null).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace coll::tools {

class JsonWriter {
 public:
  JsonWriter& begin_object(std::string_view key = {}) {
    return open(key, nlohmann::ordered_json::object());
  }
  JsonWriter& end_object() { return close(); }
  JsonWriter& begin_array(std::string_view key = {}) {
    return open(key, nlohmann::ordered_json::array());
  }
  JsonWriter& end_array() { return close(); }
  JsonWriter& field(std::string_view key, std::string_view value);
  JsonWriter& field(std::string_view key, const char* value) {
    return field(key, std::string_view(value));
  }
  JsonWriter& field(std::string_view key, double value);
  JsonWriter& field(std::string_view key, long long value);
  JsonWriter& field(std::string_view key, std::size_t value) {
    return field(key, static_cast<long long>(value));
  }
  JsonWriter& field(std::string_view key, int value) {
    return field(key, static_cast<long long>(value));
  }
  JsonWriter& field(std::string_view key, bool value);
  // Inside an array.
  JsonWriter& element(double value);
  JsonWriter& element(long long value);
  JsonWriter& element(int value) { return element(static_cast<long long>(value)); }

  // The document written so far (containers still open are shown as they are); invalid UTF-8 in
  // a string is replaced rather than thrown on, as the hand-written writer passed bytes through.
  std::string text() const {
    return document_.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  // Writes the document; throws coll::Error naming the path on failure.
  void save(const std::string& path) const;

 private:
  JsonWriter& open(std::string_view key, nlohmann::ordered_json empty_container);
  JsonWriter& close();
  // Adds `value` under `key` in the open object, or at the end of the open array (key empty).
  nlohmann::ordered_json& add(std::string_view key, nlohmann::ordered_json value);
  nlohmann::ordered_json document_;
  std::vector<nlohmann::ordered_json*> open_;  // the containers being written, innermost last
};

}  // namespace coll::tools
