// A minimal streaming JSON writer: enough for collbench's reports, with commas and escaping
// handled so callers only say what they write.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace collbench {

class JsonWriter {
 public:
  JsonWriter& begin_object(std::string_view key = {});
  JsonWriter& end_object();
  JsonWriter& begin_array(std::string_view key = {});
  JsonWriter& end_array();
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
  JsonWriter& element(double value);  // inside an array

  const std::string& text() const { return out_; }
  // Writes the document; throws coll::Error naming the path on failure.
  void save(const std::string& path) const;

 private:
  void prefix(std::string_view key);
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
};

}  // namespace collbench
