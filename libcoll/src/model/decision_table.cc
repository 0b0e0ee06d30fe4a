#include "coll/model/decision_table.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "coll/env.hpp"
#include "coll/error.hpp"
#include "model/atomic_file.hpp"

namespace coll::model {
namespace {

constexpr const char* kFormat = "libcoll-tuning 1";
constexpr std::string_view kSharedSuffix = "/shared";
constexpr std::string_view kInPlaceSuffix = "/in_place";

std::string trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return std::string(text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1));
}

bool all_digits(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "2x2" or "3+2" (every part a positive rank count); nullopt when malformed.
std::optional<std::string> parse_nodes(const std::string& text) {
  const auto x = text.find('x');
  if (x != std::string::npos) {
    const std::string nodes = text.substr(0, x), per_node = text.substr(x + 1);
    if (!all_digits(nodes) || !all_digits(per_node) || nodes.size() > 6 || per_node.size() > 6 ||
        std::stoi(nodes) < 1 || std::stoi(per_node) < 1) {
      return std::nullopt;
    }
    return std::to_string(std::stoi(nodes)) + "x" + std::to_string(std::stoi(per_node));
  }
  std::vector<int> sizes;
  std::stringstream parts(text);
  for (std::string part; std::getline(parts, part, '+');) {
    if (!all_digits(part) || part.size() > 6 || std::stoi(part) < 1) return std::nullopt;
    sizes.push_back(std::stoi(part));
  }
  if (sizes.empty() || text.back() == '+') return std::nullopt;
  const bool uniform =
      std::all_of(sizes.begin(), sizes.end(), [&](int s) { return s == sizes[0]; });
  if (uniform) return std::to_string(sizes.size()) + "x" + std::to_string(sizes[0]);
  std::string key;
  for (const int size : sizes) key += (key.empty() ? "" : "+") + std::to_string(size);
  return key;
}

// Whether `text` ends in `suffix` after something; if so, `text` loses it.
bool take_suffix(std::string& text, std::string_view suffix) {
  if (text.size() <= suffix.size() || !text.ends_with(suffix)) return false;
  text.resize(text.size() - suffix.size());
  return true;
}

// The nodes' key, then "/shared" and "/in_place" where the text has them (in that order).
std::optional<std::string> parse_shape(std::string text) {
  const bool in_place = take_suffix(text, kInPlaceSuffix);
  const bool shared = take_suffix(text, kSharedSuffix);
  const auto nodes = parse_nodes(text);
  if (!nodes) return std::nullopt;
  return *nodes + std::string(shared ? kSharedSuffix : "") +
         std::string(in_place ? kInPlaceSuffix : "");
}

}  // namespace

std::string shape_key(const Shape& shape, bool shared_buffers, bool in_place) {
  std::string key;
  if (shape.min_local() == shape.max_local()) {
    key = std::to_string(shape.nodes) + "x" + std::to_string(shape.max_local());
  } else {
    for (const int size : shape.local_sizes) key += (key.empty() ? "" : "+") + std::to_string(size);
  }
  return key + std::string(shared_buffers ? kSharedSuffix : "") +
         std::string(in_place ? kInPlaceSuffix : "");
}

std::string DecisionTable::key_for(const Shape& shape, bool shared_buffers, bool in_place) const {
  std::string key = shape_key(shape, shared_buffers, in_place);
  return in_place && !rules.contains(key) ? shape_key(shape, shared_buffers) : key;
}

const DecisionRule* DecisionTable::find(const Shape& shape, std::size_t bytes, bool shared_buffers,
                                        bool in_place) const {
  const auto it = rules.find(key_for(shape, shared_buffers, in_place));
  if (it == rules.end()) return nullptr;
  const DecisionRule* covering = nullptr;
  for (const auto& rule : it->second) {
    if (rule.from_bytes > bytes) break;
    covering = &rule;
  }
  return covering;
}

std::string DecisionTable::text() const {
  std::ostringstream out;
  out << "# libcoll decision table, written by collbench --tune: the all-reduce algorithm `auto`\n"
      << "# runs per job shape (NODESxRANKS_PER_NODE, or ranks per node joined by '+'; '/shared':\n"
      << "# for buffers from allocate_shared; '/in_place': for calls in place) from a size\n"
      << "# in bytes up to the next rule of the same shape (COLL_TUNING_FILE)\n"
      << "format = " << kFormat << "\n"
      << "host = " << host << "\n";
  for (const auto& [shape, shape_rules] : rules) {
    for (const auto& rule : shape_rules) {
      out << shape << " " << rule.from_bytes << " " << rule.algorithm << "\n";
    }
  }
  return out.str();
}

DecisionTable parse_decision_table(std::string_view text, const std::string& path,
                                   const std::vector<std::string>& known_algorithms) {
  DecisionTable table;
  bool format_seen = false;
  std::istringstream in{std::string(text)};
  std::string line;
  auto fail = [&](int number, const std::string& problem) {
    throw Error(Status::InvalidArgument,
                "tuning file " + path + (number > 0 ? " line " + std::to_string(number) : "") +
                    ": " + problem + "; rerun `collbench --tune` or set COLL_TUNING_FILE=none");
  };
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (const auto equals = line.find('='); equals != std::string::npos) {
      const std::string key = trim(line.substr(0, equals)), value = trim(line.substr(equals + 1));
      if (key == "format") {
        if (value != kFormat) fail(number, "format is '" + value + "', expected '" + kFormat + "'");
        format_seen = true;
      } else if (key == "host") {
        table.host = value;
      } else {
        fail(number, "unknown key '" + key + "'");
      }
      continue;
    }
    std::istringstream fields(line);
    std::string shape_text, size_text, algorithm, extra;
    if (!(fields >> shape_text >> size_text >> algorithm) || (fields >> extra)) {
      fail(number,
           "expected 'SHAPE FROM_BYTES ALGORITHM' (e.g. '2x2 65536 ring'), got '" + line + "'");
    }
    const auto shape = parse_shape(shape_text);
    if (!shape) {
      fail(number, "shape '" + shape_text +
                       "' is neither NODESxRANKS_PER_NODE nor A+B+... (optionally with /shared, "
                       "then /in_place)");
    }
    const auto bytes = parse_size(size_text);
    if (!bytes || *bytes < 0) fail(number, "'" + size_text + "' is not a size in bytes");
    if (std::find(known_algorithms.begin(), known_algorithms.end(), algorithm) ==
        known_algorithms.end()) {
      std::string known;
      for (const auto& name : known_algorithms) known += (known.empty() ? "" : ", ") + name;
      fail(number, "unknown algorithm '" + algorithm + "' (known: " + known + ")");
    }
    auto& shape_rules = table.rules[*shape];
    const auto from = static_cast<std::size_t>(*bytes);
    if (!shape_rules.empty() && from <= shape_rules.back().from_bytes) {
      fail(number, "sizes of shape " + *shape + " must increase (" + std::to_string(from) +
                       " after " + std::to_string(shape_rules.back().from_bytes) + ")");
    }
    shape_rules.push_back({from, algorithm});
  }
  if (!format_seen) fail(0, std::string("no 'format = ") + kFormat + "' line");
  return table;
}

std::optional<DecisionTable> load_decision_table(const std::string& path,
                                                 const std::vector<std::string>& known_algorithms) {
  std::ifstream in(path);
  if (!in) {
    if (::access(path.c_str(), F_OK) != 0) return std::nullopt;
    throw Error(Status::InvalidArgument, "tuning file " + path + " cannot be read");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_decision_table(text.str(), path, known_algorithms);
}

void save_decision_table(const DecisionTable& table, const std::string& path) {
  write_file_atomically(path, table.text(), "tuning file");
}

std::string decision_table_path() {
  if (auto path = env_string("COLL_TUNING_FILE")) return *path == "none" ? std::string() : *path;
  const auto home = env_string("HOME");
  return (home ? *home : std::string(".")) + "/.cache/libcoll/tuning.txt";
}

std::vector<DecisionRule> rules_from_winners(
    const std::vector<std::pair<std::size_t, std::string>>& winners) {
  std::vector<DecisionRule> rules;
  std::size_t previous_bytes = 0;
  for (const auto& [bytes, algorithm] : winners) {
    if (rules.empty()) {
      rules.push_back({0, algorithm});
    } else if (algorithm != rules.back().algorithm) {
      const auto boundary =
          static_cast<std::size_t>(std::sqrt(double(previous_bytes) * double(bytes)));
      rules.push_back({std::max(boundary, previous_bytes + 1), algorithm});
    }
    previous_bytes = bytes;
  }
  return rules;
}

}  // namespace coll::model
