// The paper's Tables 6 and 7 (Shi et al. 2017; their shape as the project's reference describes
// it, their numbers not being available), modelled: for AlexNet, GoogLeNet and ResNet-50
// and every strategy (strategy.hpp), the gradient aggregation overhead per iteration that
// computation does not hide (exposed communication), the total communication, the iteration
// time and the scaling efficiency, at 1, 2 and 4 GPUs in one node (Table 6) and 8 GPUs on 2
// nodes and 16 on 4 (Table 7); and the same at 64-4096 GPUs (the scaling simulation).
// Everything comes from the cost model and the WFBP simulator: no process is launched.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coll/model/link_params.hpp"
#include "study/strategy.hpp"

namespace coll::study {

// What the tables are computed from; collbench fills it from its flags (--models-dir,
// --model-gradients, --strategy, --cost-preset, --compute-profile, --compute-scale, --batch-per,
// --ranks-per-node).
struct TableInputs {
  std::string models_dir;               // where the model tables are
  std::string model;                    // one model's cells only; "" = every paper model
  std::string strategy;                 // one strategy's cells only; "" = every strategy
  std::string cost_preset;              // "" = COLL_COST_PRESET, else p40-ib56
  std::string compute_profile = "p40";  // "p40" (from FLOPs) or a CSV of backward times
  double compute_scale = 1;             // multiplies the compute profile
  bool batch_per_node = false;          // the model's batch split over a node's GPUs
  int ranks_per_node = 8;               // the scaling cells' GPUs per node
};

struct TableCell {
  int table = 0;  // 6, 7, or 0 for the scaling simulation
  std::string model, strategy, variant, fusion;
  int nodes = 1, ranks_per_node = 1, batch_per_gpu = 1;
  double forward_ms = 0, backward_ms = 0, comm_ms = 0, exposed_ms = 0, iteration_ms = 0;
  double efficiency = 1;  // throughput / (GPUs x one GPU's throughput)
  std::size_t buckets = 0;
  // Messages passed on in sequence (ModelledIteration::hops): over every bucket, and over the
  // part of the all-reduces that runs after backward (the exposed tail).
  double hops = 0, tail_hops = 0;
  double phase_overlap_ms = 0;  // ModelledIteration::phase_overlap_s, in ms
  std::string algorithms;       // "hierarchical x4, ring x1"
  double simulated_ms = 0;      // wall time this cell's simulation took on this machine
  // Why its exposed column cannot be compared within a few per cent (exposed_conditioning.hpp),
  // or "": set for the modelled tables' cells.
  std::string warning;
  int gpus() const { return nodes * ranks_per_node; }
};

// The paper's models, and its shapes: Table 6 (1, 2, 4 GPUs in a node), Table 7 (2 and 4 nodes
// of 4).
struct PaperShape {
  int table, nodes, ranks_per_node;
};
const std::vector<std::string>& paper_models();
const std::vector<PaperShape>& paper_shapes();

// The tables' cost model: --cost-preset, else COLL_COST_PRESET, else p40-ib56 (its name, and
// its parameters).
std::string table_preset(const TableInputs& inputs);
coll::model::CostParams table_params(const TableInputs& inputs);
// One modelled cell of `strategy` on `model` (`variant`; "" = the strategy's own table), as the
// emulated cluster can run it: its shaped links reach no peer's memory, so no peer_read.
TableCell modelled_cell(const TableInputs& inputs, const Strategy& strategy,
                        const std::string& model, const std::string& variant, int nodes,
                        int ranks_per_node);

// "Scales well": at least this efficiency; an assumption of this tool (the paper's is not known).
inline constexpr double kScalesWell = 0.9;

// What precedes a warning wherever a table prints one: no warned cell without it.
inline constexpr char kWarningMark[] = "\u26a0";

// The cell of `model` and `strategy` at `gpus` among `cells`, or nullptr.
const TableCell* find_cell(const std::vector<TableCell>& cells, const std::string& model,
                           const std::string& strategy, int gpus);

// One cell of the tables (with its efficiency) under `params`: `strategy` on its own model table.
TableCell cell_under(const TableInputs& inputs, const coll::model::CostParams& params,
                     const Strategy& strategy, const std::string& model, int nodes,
                     int ranks_per_node);

// "12.3", "45 %", "+7 %": the tables' number formats; the header every table starts with.
std::string ms(double value);
std::string percent(double value);
std::string signed_percent(double value);
std::string tables_header(const TableInputs& inputs, const std::string& what);

// Table 6 and 7 cells, every model and strategy (those --model-gradients and --strategy
// select). Throws coll::Error on a bad preset or table.
std::vector<TableCell> paper_table_cells(const TableInputs& inputs);
// Scaling cells: 64, 128, ... 4096 GPUs at inputs.ranks_per_node per node (8 unless given).
std::vector<TableCell> scaling_cells(const TableInputs& inputs);

// The closing comparison per model at 16 GPUs: the paper-era strategy that exposes the least
// communication, and `best` on that strategy's own model table (the same bytes). None when
// --strategy selects one strategy.
struct ClosingComparison {
  TableCell paper_era, best;
};
std::vector<ClosingComparison> closing_comparisons(const std::vector<TableCell>& cells,
                                                   const TableInputs& inputs);

// One closing comparison's figures, modelled or emulated, and their markdown line ("- resnet50:
// mxnet 0.41 ms exposed, best 0.09 ms (4.5x lower, table mxnet); iteration ... efficiency ...",
// no newline), the lines' heading, and the JSON entry with both cells and the exposed ratio.
struct ClosingFigures {
  std::string model, strategy, variant;
  double exposed_ms[2], iteration_ms[2], efficiency[2];  // [0] the paper-era strategy, [1] best
  std::string warning;  // a warning of either cell ("" if neither has one)
};
std::string closing_line(const ClosingFigures& figures);
std::string closing_heading(const std::string& how);  // how: "" (modelled) or "Emulated at"
nlohmann::ordered_json closing_json(const ClosingFigures& figures, nlohmann::ordered_json paper_era,
                                    nlohmann::ordered_json best);

// Markdown tables, the closing lines included; and the JSON document of the cells.
std::string paper_tables_markdown(const std::vector<TableCell>& cells,
                                  const std::vector<ClosingComparison>& closing,
                                  const TableInputs& inputs);
std::string scaling_markdown(const std::vector<TableCell>& cells, const TableInputs& inputs);
nlohmann::ordered_json cells_doc(const std::vector<TableCell>& cells, const TableInputs& inputs,
                                 const std::string& mode);
nlohmann::ordered_json cell_json(const TableCell& cell);
// The --paper-tables JSON document: cells_doc with the closing comparisons, the reference
// points and findings (paper_findings.hpp) and, when every model and strategy is shown, the
// sensitivity (paper_sensitivity.hpp).
nlohmann::ordered_json paper_tables_doc(const std::vector<TableCell>& cells,
                                        const std::vector<ClosingComparison>& closing,
                                        const TableInputs& inputs);

}  // namespace coll::study
