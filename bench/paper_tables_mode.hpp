// collbench --paper-tables and --model-only --scaling: the study's tables (study/paper_tables.hpp)
// computed from collbench's flags, printed, and written to --json.
#pragma once

#include <string>

#include "options.hpp"
#include "study/paper_tables.hpp"

namespace collbench {

// The tables' inputs as the flags give them.
coll::study::TableInputs table_inputs(const Options& options);

// Prints `markdown` and writes `json` to --json when given; returns the exit status.
int print_and_save(const std::string& markdown, const std::string& json, const Options& options);

// --paper-tables (with --emulate: emulation.hpp) / --model-only --scaling: prints, writes --json;
// returns the exit status.
int run_paper_tables(const Options& options);
int run_scaling(const Options& options);

}  // namespace collbench
