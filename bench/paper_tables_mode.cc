#include "paper_tables_mode.hpp"

#include <cstdio>
#include <fstream>

#include "emulation.hpp"

namespace collbench {

using coll::study::TableInputs;

TableInputs table_inputs(const Options& options) {
  return {.models_dir = options.models_dir,
          .model = options.model,
          .strategy = options.strategy,
          .cost_preset = options.cost_preset,
          .compute_profile = options.compute_profile,
          .compute_scale = options.compute_scale,
          .batch_per_node = options.batch_per_node,
          .ranks_per_node = options.ranks_per_node};
}

int print_and_save(const std::string& markdown, const std::string& json, const Options& options) {
  std::fputs(markdown.c_str(), stdout);
  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path);
    out << json;
    if (!out.flush()) {
      std::fprintf(stderr, "collbench: cannot write %s\n", options.json_path.c_str());
      return 1;
    }
  }
  return 0;
}

int run_paper_tables(const Options& options) {
  if (options.emulate) return run_emulated_tables(options);
  const TableInputs inputs = table_inputs(options);
  const auto cells = coll::study::paper_table_cells(inputs);
  const auto closing = coll::study::closing_comparisons(cells, inputs);
  return print_and_save(coll::study::paper_tables_markdown(cells, closing, inputs),
                        coll::study::paper_tables_doc(cells, closing, inputs).dump(1) + "\n",
                        options);
}

int run_scaling(const Options& options) {
  const TableInputs inputs = table_inputs(options);
  const auto cells = coll::study::scaling_cells(inputs);
  return print_and_save(coll::study::scaling_markdown(cells, inputs),
                        coll::study::cells_doc(cells, inputs, "scaling").dump(1) + "\n", options);
}

}  // namespace collbench
