// A measured decision table: which all-reduce algorithm `auto` runs, per job shape and message
// size, written by `collbench --tune` and read by the communicator's Selector before it asks the
// cost model (as Open MPI's dynamic rules file or NCCL's tuner plugin do).
//
// File format (text; '#' starts a comment line; blank lines are skipped):
//   format = libcoll-tuning 1
//   host = <where it was measured; informational>
//   <SHAPE> <FROM_BYTES> <ALGORITHM>        one rule a line
// SHAPE is NODESxRANKS_PER_NODE ("2x2"), or the ranks of every node joined by '+' for uneven
// nodes ("3+2"); "/shared" after it ("1x2/shared") marks rules measured with buffers from
// allocate_shared, which hold for calls with such buffers (the others for the rest), and
// "/in_place" after that ("1x2/shared/in_place") rules measured in place, which hold for calls in
// place (where a shape has none, its rules measured out of place hold for them too). A rule holds
// from FROM_BYTES (plain bytes or K/M/G) up to the next rule of the same shape; FROM_BYTES must
// increase within a shape. Sizes below a shape's first rule, and shapes without rules, are left to
// the cost model.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/model/shape.hpp"

namespace coll::model {

struct DecisionRule {
  bool operator==(const DecisionRule&) const = default;
  std::size_t from_bytes = 0;
  std::string algorithm;
};

struct DecisionTable {
  std::string host;
  std::map<std::string, std::vector<DecisionRule>> rules;  // by shape_key, from_bytes ascending

  // The rule covering `bytes` at `shape` for shared or other buffers, out of place or in place,
  // or nullptr.
  const DecisionRule* find(const Shape& shape, std::size_t bytes, bool shared_buffers = false,
                           bool in_place = false) const;
  // The key whose rules hold for such calls: the in-place one only where the table has it.
  std::string key_for(const Shape& shape, bool shared_buffers, bool in_place) const;
  std::string text() const;  // the file's contents
};

// "2x2" for uniform nodes, "3+2" for uneven ones; "/shared" appended for shared buffers' rules,
// then "/in_place" for rules measured in place.
std::string shape_key(const Shape& shape, bool shared_buffers = false, bool in_place = false);

// Throws coll::Error (InvalidArgument) "tuning file PATH line N: PROBLEM" for a malformed line,
// a bad shape or size, sizes out of order, or an algorithm not in `known_algorithms`.
DecisionTable parse_decision_table(std::string_view text, const std::string& path,
                                   const std::vector<std::string>& known_algorithms);
// nullopt when the file does not exist; otherwise as parse_decision_table.
std::optional<DecisionTable> load_decision_table(const std::string& path,
                                                 const std::vector<std::string>& known_algorithms);
// Writes atomically, creating the parent directory; throws coll::Error (SystemError).
void save_decision_table(const DecisionTable& table, const std::string& path);

// COLL_TUNING_FILE, else $HOME/.cache/libcoll/tuning.txt; empty when COLL_TUNING_FILE=none.
std::string decision_table_path();

// The rules of one shape from measured winners at ascending sizes: one rule per run of equal
// winners, starting at 0 and then halfway (geometrically) between the two sizes where the winner
// changes.
std::vector<DecisionRule> rules_from_winners(
    const std::vector<std::pair<std::size_t, std::string>>& winners);

}  // namespace coll::model
