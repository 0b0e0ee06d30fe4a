// The strategy table, the modelled iteration and the modelled paper tables.
#include <gtest/gtest.h>

#include <algorithm>

#include "coll/error.hpp"
#include "coll/model/preset.hpp"
#include "coll/selector.hpp"
#include "study/fusion_plan.hpp"
#include "study/iteration_model.hpp"
#include "study/paper_findings.hpp"
#include "study/paper_sensitivity.hpp"
#include "study/paper_tables.hpp"
#include "study/strategy.hpp"

namespace coll::study {
namespace {

const char* const kModels[] = {"alexnet", "googlenet", "resnet50"};

IterationSetup setup_of(const Strategy& strategy, int nodes, int per_node) {
  IterationSetup setup;
  setup.shape = coll::model::Shape::uniform(nodes, per_node);
  setup.params = *coll::model::find_preset("p40-ib56");
  setup.algorithm = strategy.algorithm;
  setup.inter = strategy.inter;
  setup.ps_servers = strategy.servers_per_node ? nodes : 0;
  setup.fusion = strategy.fusion;
  setup.overlap = strategy.overlap;
  setup.batch_per_gpu = 32;
  return setup;
}

ModelTable table_of(const Strategy& strategy, const std::string& model) {
  return load_model_table(COLL_MODELS_DIR, model, strategy.variant_for(model));
}

TEST(Strategy, EveryStrategyIsComplete) {
  const auto modelled = coll::modeled_algorithms();
  for (const auto& s : strategies()) {
    EXPECT_NO_THROW(coll::study::parse_policy(s.fusion)) << s.name;
    EXPECT_TRUE(s.algorithm == "auto" ||
                std::find(modelled.begin(), modelled.end(), s.algorithm) != modelled.end())
        << s.name;
    for (const char* model : kModels) EXPECT_NO_THROW(table_of(s, model)) << s.name << model;
    EXPECT_EQ(&find_strategy(s.name), &s);
    EXPECT_NE(strategy_list().find(s.name + "\n"), std::string::npos);
  }
  EXPECT_THROW(find_strategy("nosuch"), coll::Error);
  EXPECT_EQ(find_strategy("caffe-mpi").resnet50, "caffe_he_all_blobs");
  EXPECT_EQ(find_strategy("ddp").googlenet, "torchvision_aux");
}

TEST(IterationModel, OneGpuCommunicatesNothing) {
  for (const auto& s : strategies()) {
    const ModelledIteration it = model_iteration(table_of(s, "resnet50"), setup_of(s, 1, 1));
    EXPECT_EQ(it.comm_s, 0) << s.name;
    EXPECT_EQ(it.exposed_s, 0) << s.name;
    EXPECT_DOUBLE_EQ(it.iteration_s, it.forward_s + it.backward_s) << s.name;
    EXPECT_NEAR(it.backward_s, 2 * it.forward_s, 1e-12) << "backward = 2 x forward FLOPs";
  }
}

TEST(IterationModel, WithoutOverlapEveryByteIsExposed) {
  const Strategy& cntk = find_strategy("cntk");
  const ModelTable table = table_of(cntk, "googlenet");
  const ModelledIteration it = model_iteration(table, setup_of(cntk, 4, 4));
  EXPECT_GT(it.comm_s, 0);
  EXPECT_NEAR(it.exposed_s, it.comm_s, 1e-12);
  EXPECT_EQ(it.fusion, "layer");
  std::size_t layers = 1;
  for (std::size_t i = 1; i < table.tensors.size(); ++i) {
    layers += table.tensors[i].layer != table.tensors[i - 1].layer;
  }
  EXPECT_EQ(it.buckets.size(), layers);
}

TEST(IterationModel, BestNeverExposesMoreThanTheRingStrategiesOnTheirOwnTables) {
  // best's fusion candidates include caffe-mpi's (none) and ddp's (buckets:25M) plans, and its
  // per-bucket algorithm is never slower than the ring: its plan cannot end later.
  const Strategy& best = find_strategy("best");
  for (const char* name : {"caffe-mpi", "ddp"}) {
    const Strategy& other = find_strategy(name);
    for (const char* model : kModels) {
      for (int nodes : {1, 2, 4}) {
        const ModelTable table = table_of(other, model);
        const double theirs = model_iteration(table, setup_of(other, nodes, 4)).exposed_s;
        const double ours = model_iteration(table, setup_of(best, nodes, 4)).exposed_s;
        EXPECT_LE(ours, theirs + 1e-12) << name << " " << model << " " << nodes << " nodes";
      }
    }
  }
}

TEST(IterationModel, StrategiesPlaceTheirServersAndLevels) {
  // mxnet: hierarchical_leader with a parameter server among the leaders, one server per node:
  // the setup's tuning reaches the library's own formula.
  const IterationSetup setup = setup_of(find_strategy("mxnet"), 4, 4);
  const std::size_t bytes = 1 << 24;
  coll::Tuning tuning;
  tuning.algorithm_options.set("COLL_HIER_INTER", "ps");
  tuning.algorithm_options.set("COLL_PS_SERVERS", "4");
  const auto [seconds, algorithm] = modelled_allreduce(setup, bytes);
  EXPECT_EQ(algorithm, "hierarchical_leader");
  EXPECT_DOUBLE_EQ(
      seconds,
      coll::predict("hierarchical_leader", setup.params, setup.shape, bytes, tuning)->total_s());
  IterationSetup one_server = setup;  // PS among 4 leaders with k = 4 prices as their ring;
  one_server.ps_servers = 1;          // a single server does not
  EXPECT_GT(modelled_allreduce(one_server, bytes).first, seconds);
  IterationSetup unmodelled = setup;
  unmodelled.inter = "native_mpi";  // a baseline without a formula: refused, not ignored
  EXPECT_THROW(modelled_allreduce(unmodelled, bytes), coll::Error);
}

TEST(IterationModel, PricingByPiecesEqualsTheFormulaAtEverySize) {
  // price_sizes interpolates where the formula is affine: every bucket time must still be the
  // formula's own, for every strategy, at a shape where the slower link class changes with size.
  for (const auto& s : strategies()) {
    const IterationSetup setup = setup_of(s, 8, 4);
    const ModelTable table = table_of(s, "resnet50");
    const ModelledIteration it = model_iteration(table, setup);
    for (std::size_t b = 0; b < it.buckets.size(); ++b) {
      const auto& timing = it.timeline.buckets[b];
      EXPECT_NEAR(timing.end_s - timing.start_s,
                  modelled_allreduce(setup, it.buckets[b].bytes).first,
                  1e-9 * (timing.end_s - timing.start_s))
          << s.name << " bucket " << b;
    }
  }
}

TEST(PaperTables, EveryCellAndTheClosingLine) {
  TableInputs inputs;
  inputs.models_dir = COLL_MODELS_DIR;
  const auto cells = paper_table_cells(inputs);
  EXPECT_EQ(cells.size(), 3u * strategies().size() * 5);
  for (const auto& cell : cells) {
    if (cell.gpus() == 1) {
      EXPECT_DOUBLE_EQ(cell.efficiency, 1.0) << cell.strategy;
    }
    EXPECT_GT(cell.efficiency, 0) << cell.strategy;
    EXPECT_LE(cell.efficiency, 1.0 + 1e-12) << cell.strategy;
    EXPECT_LE(cell.exposed_ms, cell.comm_ms + 1e-9) << cell.strategy;
    EXPECT_EQ(cell.table, cell.gpus() <= 4 ? 6 : 7);
  }
  const std::string markdown =
      paper_tables_markdown(cells, closing_comparisons(cells, inputs), inputs);
  for (const char* text :
       {"## Table 6", "## Table 7", "### resnet50", "At 16 GPUs",
        "- alexnet (table mxnet): iteration mxnet ", "- resnet50 (table mxnet): iteration mxnet ",
        "today's defaults", "- resnet50: best "}) {
    EXPECT_NE(markdown.find(text), std::string::npos) << text;
  }
}

// A row of the modelled tables: "| strategy | table | GPUs ..." of `cell`.
std::string row_of(const std::string& markdown, const TableCell& cell) {
  const std::string table = "\n## Table " + std::to_string(cell.table);
  const std::size_t section = markdown.find("\n### " + cell.model, markdown.find(table));
  const std::string gpus =
      std::to_string(cell.gpus()) + (cell.nodes > 1 ? " (" + std::to_string(cell.nodes) + "x" +
                                                          std::to_string(cell.ranks_per_node) + ")"
                                                    : "");
  const std::size_t at =
      markdown.find("| " + cell.strategy + " | " + cell.variant + " | " + gpus + " |", section);
  return at == std::string::npos ? "" : markdown.substr(at, markdown.find('\n', at) - at);
}

TEST(PaperTables, EveryWarnedCellIsPrintedWithItsMark) {
  TableInputs inputs;
  inputs.models_dir = COLL_MODELS_DIR;
  const auto cells = paper_table_cells(inputs);
  const std::string markdown =
      paper_tables_markdown(cells, closing_comparisons(cells, inputs), inputs);
  int warned = 0;
  for (const auto& cell : cells) {
    const std::string row = row_of(markdown, cell);
    ASSERT_FALSE(row.empty()) << cell.model << " " << cell.strategy << " " << cell.gpus();
    const bool marked = row.find(kWarningMark) != std::string::npos;
    EXPECT_EQ(marked, !cell.warning.empty()) << row;
    if (!cell.warning.empty()) {
      ++warned;
      EXPECT_NE(row.find(cell.warning), std::string::npos) << row;
    }
  }
  // p40-ib56 warns (a queue of parameter-server pushes is ill-conditioned at 2 x 4, the test
  // above): a check that never meets a warned cell proves nothing.
  EXPECT_GT(warned, 0);
  // A closing comparison built on a warned cell says so.
  for (const auto& [era, best] : closing_comparisons(cells, inputs)) {
    const bool warned_pair = !era.warning.empty() || !best.warning.empty();
    const std::string line = "- " + era.model + " (table " + era.variant + ")";
    const std::size_t at = markdown.find(line);
    ASSERT_NE(at, std::string::npos) << line;
    const std::string closing = markdown.substr(at, markdown.find('\n', at) - at);
    EXPECT_EQ(closing.find("(warned: ") != std::string::npos, warned_pair) << closing;
  }
}

TEST(PaperTables, FindingsAreComputedFromTheCellsAndReferencePointsSitBesideThem) {
  TableInputs inputs;
  inputs.models_dir = COLL_MODELS_DIR;
  const auto params = table_params(inputs);
  for (const bool per_node : {false, true}) {
    inputs.batch_per_node = per_node;
    const auto cells = paper_table_cells(inputs);
    const auto doc = findings_json(cells, params, per_node);
    ASSERT_EQ(doc["references"].size(), 3u);
    for (const auto& reference : doc["references"]) {
      EXPECT_TRUE(reference["modelled_caffe_mpi_efficiency"].is_number()) << reference;
      EXPECT_NE(reference["source"].get<std::string>().find("not read"), std::string::npos);
    }
    ASSERT_EQ(doc["findings"].size(), 4u);
    // Finding 4 follows the cells: at per-GPU batches mxnet hides everything on every model
    // (contradicted); at per-node batches ResNet-50's best paper-era strategy falls below 90 %.
    EXPECT_EQ(doc["findings"][3]["verdict"], per_node ? "depends on the model" : "contradicted");
    // And cells moved below the threshold move the verdict.
    auto moved = cells;
    for (auto& cell : moved) {
      if (cell.gpus() == 16) cell.efficiency = std::min(cell.efficiency, 0.5);
    }
    EXPECT_EQ(findings_json(moved, params, per_node)["findings"][3]["verdict"], "reproduced");
  }
}

TEST(PaperTables, SensitivityRowsVaryOneChoiceEachAndTheFirstIsTheTables) {
  TableInputs inputs;
  inputs.models_dir = COLL_MODELS_DIR;
  const auto rows = sensitivity_json(inputs);
  ASSERT_EQ(rows.size(), 7u);
  const auto cells = paper_table_cells(inputs);
  for (const auto& model : paper_models()) {
    double top = 0;
    for (const auto& cell : cells) {
      const bool paper_era = find_strategy(cell.strategy).paper_era;
      if (cell.model == model && cell.gpus() == 16 && paper_era)
        top = std::max(top, cell.efficiency);
    }
    EXPECT_DOUBLE_EQ(rows[0]["models"][model]["top_efficiency"].get<double>(), top) << model;
  }
  // Less compute per iteration hides less: no model's top strategy scales better at 70 % of peak
  // than at 30 %.
  for (const auto& model : paper_models()) {
    EXPECT_LE(rows[3]["models"][model]["top_efficiency"].get<double>(),
              rows[2]["models"][model]["top_efficiency"].get<double>() + 1e-12)
        << model;
  }
  // One alpha per phase makes linear exchanges cheaper and nothing dearer: no top strategy
  // scales worse than in the tables.
  EXPECT_EQ(rows[6]["condition"], "alpha once per phase, not per message");
  for (const auto& model : paper_models()) {
    EXPECT_GE(rows[6]["models"][model]["top_efficiency"].get<double>(),
              rows[0]["models"][model]["top_efficiency"].get<double>() - 1e-12)
        << model;
  }
}

TEST(PaperTables, AnExposedRatioIsPrintedOnlyWhereExposedTimeMatters) {
  ClosingFigures small{"m", "mxnet", "t", {0.41, 0.09}, {134, 134}, {1, 1}, ""};
  EXPECT_NE(closing_line(small).find("negligible in both"), std::string::npos);
  EXPECT_EQ(closing_line(small).find("x lower"), std::string::npos);
  ClosingFigures felt{"m", "cntk", "t", {61.7, 17.5}, {180, 136}, {0.34, 0.64}, ""};
  EXPECT_NE(closing_line(felt).find("(3.5x lower)"), std::string::npos) << closing_line(felt);
  EXPECT_TRUE(closing_json(small, {}, {})["exposed_ratio"].is_null());
  EXPECT_NEAR(closing_json(felt, {}, {})["exposed_ratio"].get<double>(), 61.7 / 17.5, 1e-9);
}

TEST(PaperTables, AnEmulatedCellsModelCarriesTheTablesEfficiency) {
  // --emulate prints the emulated efficiency as the model's scaled by the iteration times, so
  // the cell it models must carry the table's efficiency, not a default.
  TableInputs inputs;
  inputs.models_dir = COLL_MODELS_DIR;
  const auto cells = paper_table_cells(inputs);
  const auto table = std::find_if(cells.begin(), cells.end(), [](const TableCell& cell) {
    return cell.model == "resnet50" && cell.strategy == "cntk" && cell.gpus() == 16;
  });
  ASSERT_NE(table, cells.end());
  const TableCell emulated = modelled_cell(inputs, find_strategy("cntk"), "resnet50", "", 4, 4);
  EXPECT_DOUBLE_EQ(emulated.efficiency, table->efficiency);
  EXPECT_LT(emulated.efficiency, 0.9);  // cntk does not overlap: 67 % at 16 GPUs
}

}  // namespace
}  // namespace coll::study
