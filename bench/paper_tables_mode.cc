#include "paper_tables_mode.hpp"

#include <cstdio>
#include <fstream>

#include "emulation.hpp"

namespace collbench {

using coll::study::TableInputs;

TableInputs table_inputs(const Command& command) {
  return {.models_dir = command.replay.models_dir,
          .model = command.replay.model,
          .strategy = command.replay.strategy,
          .cost_preset = command.library.cost_preset,
          .compute_profile = command.replay.compute_profile,
          .compute_scale = command.replay.compute_scale,
          .batch_per_node = command.study.batch_per_node,
          .ranks_per_node = command.job.ranks_per_node};
}

int print_and_save(const std::string& markdown, const std::string& json,
                   const std::string& json_path) {
  std::fputs(markdown.c_str(), stdout);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << json;
    if (!out.flush()) {
      std::fprintf(stderr, "collbench: cannot write %s\n", json_path.c_str());
      return 1;
    }
  }
  return 0;
}

int run_paper_tables(const Command& command) {
  if (command.study.emulate) return run_emulated_tables(command);
  const TableInputs inputs = table_inputs(command);
  const auto cells = coll::study::paper_table_cells(inputs);
  const auto closing = coll::study::closing_comparisons(cells, inputs);
  return print_and_save(coll::study::paper_tables_markdown(cells, closing, inputs),
                        coll::study::paper_tables_doc(cells, closing, inputs).dump(1) + "\n",
                        command.sweep.json_path);
}

int run_scaling(const Command& command) {
  const TableInputs inputs = table_inputs(command);
  const auto cells = coll::study::scaling_cells(inputs);
  return print_and_save(coll::study::scaling_markdown(cells, inputs),
                        coll::study::cells_doc(cells, inputs, "scaling").dump(1) + "\n",
                        command.sweep.json_path);
}

}  // namespace collbench
