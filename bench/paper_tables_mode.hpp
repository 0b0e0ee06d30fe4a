// collbench --paper-tables and --model-only --scaling: the study's tables (study/paper_tables.hpp)
// computed from collbench's flags, printed, and written to --json.
#pragma once

#include <string>

#include "options.hpp"
#include "study/paper_tables.hpp"

namespace collbench {

// The tables' inputs as the flags give them.
coll::study::TableInputs table_inputs(const Command& command);

// Prints `markdown` and writes `json` to `json_path` (--json) when given; returns the exit status.
int print_and_save(const std::string& markdown, const std::string& json,
                   const std::string& json_path);

// --paper-tables (with --emulate: emulation.hpp) / --model-only --scaling: prints, writes --json;
// returns the exit status.
int run_paper_tables(const Command& command);
int run_scaling(const Command& command);

}  // namespace collbench
