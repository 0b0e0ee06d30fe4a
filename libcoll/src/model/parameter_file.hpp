// The "key = value" text files that hold cost-model parameters: the calibration file that
// `collbench --calibrate` writes and the user presets given to --cost-preset / COLL_COST_PRESET.
// One pair a line; '#' starts a comment line; blank lines are skipped.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coll::model {

class ParameterFile {
 public:
  // nullopt when `path` does not exist. Throws coll::Error (InvalidArgument) naming `what`, the
  // path, the line and the problem for an unreadable file, a line without '=', a key not in
  // `keys` or a repeated key; `advice` ends every such message (e.g. how to regenerate it).
  static std::optional<ParameterFile> read(const std::string& path,
                                           const std::vector<std::string_view>& keys,
                                           std::string what, std::string advice);

  // The value, or "" when absent.
  std::string text(const std::string& key) const;
  // A finite number > 0; throws (missing, not a number, <= 0) naming the key.
  double positive(const std::string& key) const;
  // A finite number >= 0, or `fallback` when the key is absent.
  double non_negative(const std::string& key, double fallback) const;
  // 0 or 1, or `fallback` when the key is absent; throws naming the key for anything else.
  bool flag(const std::string& key, bool fallback) const;
  [[noreturn]] void fail(int line, const std::string& problem) const;

 private:
  std::optional<double> number(const std::string& key) const;  // nullopt when absent
  std::string path_, what_, advice_;
  std::map<std::string, std::string> values_;
};

}  // namespace coll::model
