#include "study/paper_tables.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "coll/error.hpp"
#include "coll/model/preset.hpp"
#include "study/exposed_conditioning.hpp"
#include "study/iteration_model.hpp"
#include "study/model_table.hpp"
#include "study/paper_findings.hpp"
#include "study/paper_sensitivity.hpp"
#include "study/strategy.hpp"

namespace coll::study {
namespace {

const std::vector<std::string> kModels{"alexnet", "googlenet", "resnet50"};
constexpr char kDefaultPreset[] = "p40-ib56";
// Below this share of the iteration an exposed time is nothing a user feels: no ratio of two.
constexpr double kNegligibleExposedShare = 0.05;
const std::vector<PaperShape> kPaperConfigs{{6, 1, 1}, {6, 1, 2}, {6, 1, 4}, {7, 2, 4}, {7, 4, 4}};

int batch_per_gpu(const TableInputs& inputs, const std::string& model, int ranks_per_node) {
  const int batch = p40_batch_size(model);
  return inputs.batch_per_node ? std::max(1, batch / ranks_per_node) : batch;
}

std::string format_algorithms(const std::map<std::string, int>& counts) {
  std::string out;
  for (const auto& [name, count] : counts) {
    out += (out.empty() ? "" : ", ") + name + " x" + std::to_string(count);
  }
  return out.empty() ? "-" : out;
}

// One cell: `strategy` on `table` at nodes x ranks_per_node.
TableCell model_cell(const TableInputs& inputs, const coll::model::CostParams& params,
                     const Strategy& strategy, const ModelTable& table, int nodes,
                     int ranks_per_node) {
  const auto start = std::chrono::steady_clock::now();
  IterationSetup setup;
  setup.shape = coll::model::Shape::uniform(nodes, ranks_per_node);
  setup.params = params;
  setup.algorithm = strategy.algorithm;
  setup.inter = strategy.inter;
  setup.ps_servers = strategy.servers_per_node ? nodes : 0;
  setup.fusion = strategy.fusion;
  setup.overlap = strategy.overlap;
  setup.batch_per_gpu = batch_per_gpu(inputs, table.model, ranks_per_node);
  setup.compute_scale = inputs.compute_scale;
  setup.compute_profile = inputs.compute_profile;
  const ModelledIteration it = model_iteration(table, setup);
  TableCell cell;
  cell.model = table.model;
  cell.strategy = strategy.name;
  cell.variant = table.variant;
  cell.fusion = it.fusion;
  cell.nodes = nodes;
  cell.ranks_per_node = ranks_per_node;
  cell.batch_per_gpu = setup.batch_per_gpu;
  cell.forward_ms = it.forward_s * 1e3;
  cell.backward_ms = it.backward_s * 1e3;
  cell.comm_ms = it.comm_s * 1e3;
  cell.exposed_ms = it.exposed_s * 1e3;
  cell.iteration_ms = it.iteration_s * 1e3;
  cell.buckets = it.buckets.size();
  for (std::size_t i = 0; i < it.hops.size(); ++i) {
    const auto& timing = it.timeline.buckets[i];
    cell.hops += it.hops[i];
    // A bucket that straddles the end of backward: the share of its hops after it.
    const double after = timing.end_s - std::max(timing.start_s, it.backward_s);
    if (after > 0) cell.tail_hops += it.hops[i] * after / (timing.end_s - timing.start_s);
  }
  cell.phase_overlap_ms = it.phase_overlap_s * 1e3;
  cell.algorithms = format_algorithms(it.algorithm_buckets);
  cell.simulated_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return cell;
}

ModelTable table_for(const TableInputs& inputs, const Strategy& strategy,
                     const std::string& model) {
  return load_model_table(inputs.models_dir, model, strategy.variant_for(model));
}

// Efficiency against the same strategy and table on one GPU (one GPU computes its batch and
// communicates nothing, whatever the strategy).
void set_efficiency(TableCell& cell, const TableCell& single) {
  const double samples = double(cell.gpus()) * cell.batch_per_gpu;
  const double samples_single = single.batch_per_gpu;
  cell.efficiency =
      (samples / cell.iteration_ms) / (cell.gpus() * samples_single / single.iteration_ms);
}

// A cell with its efficiency, against the same strategy and table on one GPU.
TableCell cell_with_efficiency(const TableInputs& inputs, const coll::model::CostParams& params,
                               const Strategy& strategy, const ModelTable& table, int nodes,
                               int ranks_per_node) {
  TableCell cell = model_cell(inputs, params, strategy, table, nodes, ranks_per_node);
  set_efficiency(cell, model_cell(inputs, params, strategy, table, 1, 1));
  return cell;
}

// The cell's ill-conditioning warning, remodelled with `params` and `table` as it was.
std::string modelled_warning(const TableInputs& inputs, const coll::model::CostParams& params,
                             const Strategy& strategy, const ModelTable& table,
                             const TableCell& cell) {
  return ill_conditioned_warning(exposed_swing(inputs, cell, [&](const TableInputs& scaled) {
    return model_cell(scaled, params, strategy, table, cell.nodes, cell.ranks_per_node);
  }));
}

ClosingFigures figures_of(const TableCell& era, const TableCell& best) {
  return {era.model,
          era.strategy,
          era.variant,
          {era.exposed_ms, best.exposed_ms},
          {era.iteration_ms, best.iteration_ms},
          {era.efficiency, best.efficiency},
          era.warning.empty() ? best.warning : era.warning};
}

// --model-gradients and --strategy select the models and strategies a table shows.
bool selected(const TableInputs& inputs, const std::string& model, const Strategy& strategy) {
  return (inputs.model.empty() || model == inputs.model) &&
         (inputs.strategy.empty() || strategy.name == inputs.strategy);
}

bool has_model(const std::vector<TableCell>& cells, const std::string& model) {
  return std::any_of(cells.begin(), cells.end(),
                     [&](const TableCell& cell) { return cell.model == model; });
}

}  // namespace

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f", value);
  return text;
}

std::string percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f %%", value * 100);
  return text;
}

const TableCell* find_cell(const std::vector<TableCell>& cells, const std::string& model,
                           const std::string& strategy, int gpus) {
  for (const auto& cell : cells) {
    if (cell.model == model && cell.strategy == strategy && cell.gpus() == gpus) return &cell;
  }
  return nullptr;
}

std::string signed_percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.0f %%", value * 100);
  return text;
}

const std::vector<std::string>& paper_models() {
  return kModels;
}

const std::vector<PaperShape>& paper_shapes() {
  return kPaperConfigs;
}

// --cost-preset, else COLL_COST_PRESET (as every other mode reads it), else the testbed's.
std::string table_preset(const TableInputs& inputs) {
  if (!inputs.cost_preset.empty()) return inputs.cost_preset;
  const char* preset = std::getenv("COLL_COST_PRESET");
  return preset != nullptr && *preset != '\0' ? preset : kDefaultPreset;
}

coll::model::CostParams table_params(const TableInputs& inputs) {
  return coll::model::preset_or_throw(table_preset(inputs), "--cost-preset");
}

TableCell cell_under(const TableInputs& inputs, const coll::model::CostParams& params,
                     const Strategy& strategy, const std::string& model, int nodes,
                     int ranks_per_node) {
  return cell_with_efficiency(inputs, params, strategy, table_for(inputs, strategy, model), nodes,
                              ranks_per_node);
}

TableCell modelled_cell(const TableInputs& inputs, const Strategy& strategy,
                        const std::string& model, const std::string& variant, int nodes,
                        int ranks_per_node) {
  const ModelTable table = load_model_table(
      inputs.models_dir, model, variant.empty() ? strategy.variant_for(model) : variant);
  coll::model::CostParams emulated = table_params(inputs);
  emulated.transport.peer_memory = false;
  return cell_with_efficiency(inputs, emulated, strategy, table, nodes, ranks_per_node);
}

std::string tables_header(const TableInputs& inputs, const std::string& what) {
  const auto params = table_params(inputs);
  std::ostringstream out;
  out << "# " << what << "\n"
      << "# cost model: " << params.source
      << (table_preset(inputs) == kDefaultPreset
              ? " (the paper group's all-reduce fits from their later MG-WFBP code, assumed to "
                "describe a cluster of the testbed's class; docs/cost_presets.md)"
              : "")
      << "\n"
      << "# compute: "
      << (inputs.compute_profile == "p40"
              ? "Tesla P40 from FLOPs at an assumed 50 % of peak (docs/compute_profile.md)"
              : inputs.compute_profile)
      << (inputs.compute_scale != 1 ? ", scaled x" + std::to_string(inputs.compute_scale) : "")
      << "; batch " << (inputs.batch_per_node ? "per node (split over its GPUs)" : "per GPU")
      << ": alexnet " << p40_batch_size("alexnet") << ", googlenet " << p40_batch_size("googlenet")
      << ", resnet50 " << p40_batch_size("resnet50") << "\n"
      << "# iteration = forward + backward + exposed communication; efficiency = throughput / "
         "(GPUs x one GPU's)\n";
  return out.str();
}

std::vector<TableCell> paper_table_cells(const TableInputs& inputs) {
  const auto params = table_params(inputs);
  std::vector<TableCell> cells;
  for (const auto& model : kModels) {
    for (const auto& strategy : strategies()) {
      if (!selected(inputs, model, strategy)) continue;
      const ModelTable table = table_for(inputs, strategy, model);
      const TableCell single = model_cell(inputs, params, strategy, table, 1, 1);
      for (const PaperShape& config : kPaperConfigs) {
        TableCell cell =
            config.ranks_per_node == 1
                ? single
                : model_cell(inputs, params, strategy, table, config.nodes, config.ranks_per_node);
        cell.table = config.table;
        set_efficiency(cell, single);
        cell.warning = modelled_warning(inputs, params, strategy, table, cell);
        cells.push_back(cell);
      }
    }
  }
  return cells;
}

std::vector<TableCell> scaling_cells(const TableInputs& inputs) {
  const auto params = table_params(inputs);
  const int per_node = inputs.ranks_per_node;
  std::vector<TableCell> cells;
  for (const auto& model : kModels) {
    for (const auto& strategy : strategies()) {
      if (!selected(inputs, model, strategy)) continue;
      const ModelTable table = table_for(inputs, strategy, model);
      const TableCell single = model_cell(inputs, params, strategy, table, 1, 1);
      for (int gpus = 64; gpus <= 4096; gpus *= 2) {
        if (gpus % per_node != 0) continue;
        TableCell cell = model_cell(inputs, params, strategy, table, gpus / per_node, per_node);
        set_efficiency(cell, single);
        cells.push_back(cell);
      }
    }
  }
  return cells;
}

std::vector<ClosingComparison> closing_comparisons(const std::vector<TableCell>& cells,
                                                   const TableInputs& inputs) {
  std::vector<ClosingComparison> out;
  if (!inputs.strategy.empty()) return out;  // it needs every paper-era strategy
  const auto params = table_params(inputs);
  const Strategy& best = find_strategy("best");
  for (const auto& model : kModels) {
    const TableCell* winner = nullptr;
    for (const auto& strategy : strategies()) {
      if (!strategy.paper_era) continue;
      const TableCell* cell = find_cell(cells, model, strategy.name, 16);
      if (cell && (!winner || cell->exposed_ms < winner->exposed_ms)) winner = cell;
    }
    if (!winner) continue;
    const ModelTable same = load_model_table(inputs.models_dir, model, winner->variant);
    TableCell mine = cell_with_efficiency(inputs, params, best, same, 4, 4);
    mine.table = winner->table;
    mine.warning = modelled_warning(inputs, params, best, same, mine);
    out.push_back({*winner, mine});
  }
  return out;
}

bool exposed_negligible(const ClosingFigures& f) {
  return f.exposed_ms[0] < kNegligibleExposedShare * f.iteration_ms[0] &&
         f.exposed_ms[1] < kNegligibleExposedShare * f.iteration_ms[1];
}

std::string closing_line(const ClosingFigures& f) {
  std::string exposed = ms(f.exposed_ms[0]) + " -> " + ms(f.exposed_ms[1]) + " ms";
  if (exposed_negligible(f)) {
    exposed +=
        ", negligible in both (under " + percent(kNegligibleExposedShare) + " of the iteration)";
  } else if (f.exposed_ms[1] > 0) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, " (%.1fx lower)", f.exposed_ms[0] / f.exposed_ms[1]);
    exposed += ratio;
  }
  // A comparison built on a warned cell carries its warning's kind ("CPU-bound", ...).
  const std::string warned =
      f.warning.empty() ? "" : " (warned: " + f.warning.substr(0, f.warning.find(':')) + ")";
  return "- " + f.model + " (table " + f.variant + "): iteration " + f.strategy + " " +
         ms(f.iteration_ms[0]) + " ms -> best " + ms(f.iteration_ms[1]) + " ms, efficiency " +
         percent(f.efficiency[0]) + " -> " + percent(f.efficiency[1]) + "; exposed communication " +
         exposed + warned;
}

std::string closing_heading(const std::string& how) {
  return "\n" + (how.empty() ? "At" : how) +
         " 16 GPUs (4 nodes x 4), `best` against the paper-era strategy that exposes the least "
         "communication, on that strategy's own model table:\n";
}

nlohmann::ordered_json closing_json(const ClosingFigures& f, nlohmann::ordered_json paper_era,
                                    nlohmann::ordered_json best) {
  return {{"model", f.model},
          {"paper_era", std::move(paper_era)},
          {"best", std::move(best)},
          {"exposed_negligible", exposed_negligible(f)},
          {"exposed_ratio", f.exposed_ms[1] > 0 && !exposed_negligible(f)
                                ? nlohmann::ordered_json(f.exposed_ms[0] / f.exposed_ms[1])
                                : nlohmann::ordered_json()},
          {"warning", f.warning}};
}

std::string warning_mark(const std::string& warning) {
  return warning.empty() ? "-" : std::string(kWarningMark) + " " + warning;
}

std::string defaults_markdown(const std::vector<TableCell>& cells) {
  std::ostringstream out;
  bool heading = false;
  for (const auto& model : kModels) {
    std::string line;
    for (const char* name : {"best", "ddp", "horovod"}) {
      const TableCell* cell = find_cell(cells, model, name, 16);
      if (cell == nullptr) continue;
      line += std::string(line.empty() ? "" : "; ") + name + " " + ms(cell->iteration_ms) +
              " ms, " + percent(cell->efficiency) + " (exposed " + ms(cell->exposed_ms) +
              " ms, table " + cell->variant + ")" +
              (cell->warning.empty() ? "" : " " + std::string(kWarningMark));
    }
    if (line.empty()) continue;
    if (!heading) {
      out << "\nAt 16 GPUs, `best` against today's defaults (PyTorch DDP, Horovod), each on its "
             "own "
             "model table: iteration, efficiency, exposed communication:\n";
      heading = true;
    }
    out << "- " << model << ": " << line << "\n";
  }
  return out.str();
}

std::string paper_tables_markdown(const std::vector<TableCell>& cells,
                                  const std::vector<ClosingComparison>& closing,
                                  const TableInputs& inputs) {
  std::ostringstream out;
  out << tables_header(inputs,
                       "The paper's Tables 6 and 7, modelled (cost model + WFBP simulator; "
                       "no process launched)");
  for (int table : {6, 7}) {
    out << "\n## Table " << table
        << (table == 6 ? ": gradient aggregation inside one node (1, 2, 4 GPUs)"
                       : ": across nodes (8 GPUs on 2 nodes, 16 on 4; 4 GPUs each)")
        << "\n";
    for (const auto& model : kModels) {
      if (!has_model(cells, model)) continue;
      out << "\n### " << model << "\n\n"
          << "| strategy | table | GPUs | exposed comm (ms) | total comm (ms) | iteration (ms) | "
             "efficiency | plan | warning |\n"
          << "|---|---|---|---|---|---|---|---|---|\n";
      for (const auto& cell : cells) {
        if (cell.table != table || cell.model != model) continue;
        out << "| " << cell.strategy << " | " << cell.variant << " | " << cell.gpus()
            << (cell.nodes > 1 ? " (" + std::to_string(cell.nodes) + "x" +
                                     std::to_string(cell.ranks_per_node) + ")"
                               : "")
            << " | " << ms(cell.exposed_ms) << " | " << ms(cell.comm_ms) << " | "
            << ms(cell.iteration_ms) << " | " << percent(cell.efficiency) << " | " << cell.fusion
            << ", " << cell.buckets << (cell.buckets == 1 ? " bucket, " : " buckets, ")
            << cell.algorithms << " | " << warning_mark(cell.warning) << " |\n";
      }
    }
  }
  if (!closing.empty()) out << closing_heading("");
  for (const auto& [era, mine] : closing) out << closing_line(figures_of(era, mine)) << "\n";
  out << defaults_markdown(cells)
      << findings_markdown(cells, table_params(inputs), inputs.batch_per_node);
  if (inputs.strategy.empty() && inputs.model.empty()) out << sensitivity_markdown(inputs);
  return out.str();
}

std::string scaling_markdown(const std::vector<TableCell>& cells, const TableInputs& inputs) {
  std::ostringstream out;
  out << tables_header(inputs,
                       "Scaling simulation, modelled (cost model + WFBP simulator; no process "
                       "launched)");
  std::vector<int> gpus;
  for (const auto& cell : cells) {
    if (std::find(gpus.begin(), gpus.end(), cell.gpus()) == gpus.end()) gpus.push_back(cell.gpus());
  }
  double slowest = 0;
  const TableCell* slowest_cell = nullptr;
  for (const auto& model : kModels) {
    if (!has_model(cells, model)) continue;
    out << "\n### " << model << ": scaling efficiency (exposed communication, ms)\n\n| strategy |";
    for (int g : gpus) out << " " << g << " GPUs |";
    out << "\n|---|";
    for (std::size_t i = 0; i < gpus.size(); ++i) out << "---|";
    out << "\n";
    for (const auto& strategy : strategies()) {
      if (!find_cell(cells, model, strategy.name, gpus.front())) continue;
      out << "| " << strategy.name << " |";
      for (int g : gpus) {
        const TableCell* cell = find_cell(cells, model, strategy.name, g);
        if (!cell) continue;
        out << " " << percent(cell->efficiency) << " (" << ms(cell->exposed_ms) << ") |";
        if (cell->simulated_ms > slowest) {
          slowest = cell->simulated_ms;
          slowest_cell = cell;
        }
      }
      out << "\n";
    }
  }
  if (slowest_cell) {
    out << "\nSlowest cell to simulate: " << slowest_cell->model << " " << slowest_cell->strategy
        << " at " << slowest_cell->gpus() << " GPUs, " << ms(slowest) << " ms on this machine.\n";
  }
  return out.str();
}

nlohmann::ordered_json cell_json(const TableCell& cell) {
  return {{"table", cell.table},
          {"model", cell.model},
          {"strategy", cell.strategy},
          {"variant", cell.variant},
          {"gpus", cell.gpus()},
          {"nodes", cell.nodes},
          {"ranks_per_node", cell.ranks_per_node},
          {"batch_per_gpu", cell.batch_per_gpu},
          {"forward_ms", cell.forward_ms},
          {"backward_ms", cell.backward_ms},
          {"comm_ms", cell.comm_ms},
          {"exposed_ms", cell.exposed_ms},
          {"iteration_ms", cell.iteration_ms},
          {"efficiency", cell.efficiency},
          {"fusion", cell.fusion},
          {"buckets", cell.buckets},
          {"algorithms", cell.algorithms},
          {"simulated_ms", cell.simulated_ms},
          {"warning", cell.warning}};
}

nlohmann::ordered_json cells_doc(const std::vector<TableCell>& cells, const TableInputs& inputs,
                                 const std::string& mode) {
  nlohmann::ordered_json doc;
  doc["tool"] = "collbench";
  doc["mode"] = mode;
  doc["cost_model"] = table_params(inputs).source;
  doc["batch_per"] = inputs.batch_per_node ? "node" : "gpu";
  doc["compute_profile"] = inputs.compute_profile;
  doc["compute_scale"] = inputs.compute_scale;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& cell : cells) list.push_back(cell_json(cell));
  doc["cells"] = list;
  return doc;
}

nlohmann::ordered_json paper_tables_doc(const std::vector<TableCell>& cells,
                                        const std::vector<ClosingComparison>& closing,
                                        const TableInputs& inputs) {
  auto doc = cells_doc(cells, inputs, "paper-tables");
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const auto& [era, mine] : closing) {
    entries.push_back(closing_json(figures_of(era, mine), cell_json(era), cell_json(mine)));
  }
  doc["closing"] = entries;
  const auto findings = findings_json(cells, table_params(inputs), inputs.batch_per_node);
  doc["references"] = findings["references"];
  doc["findings"] = findings["findings"];
  if (inputs.strategy.empty() && inputs.model.empty()) {
    doc["sensitivity"] = sensitivity_json(inputs);
  }
  return doc;
}

}  // namespace coll::study
