#include "study/paper_sensitivity.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

#include "study/paper_tables.hpp"
#include "study/strategy.hpp"

namespace coll::study {
namespace {

// The tables' compute runs at this share of the P40's peak (docs/compute_profile.md).
constexpr double kAssumedPeakShare = 0.5;

struct Condition {
  std::string name;
  TableInputs inputs;
  coll::model::CostParams params;
};

std::vector<Condition> conditions(const TableInputs& inputs) {
  const coll::model::CostParams fitted = table_params(inputs);
  std::vector<Condition> out{{"as in the tables", inputs, fitted}};
  TableInputs batch = inputs;
  batch.batch_per_node = !inputs.batch_per_node;
  out.push_back(
      {std::string("batch per ") + (batch.batch_per_node ? "node" : "GPU"), batch, fitted});
  for (const double share : {0.3, 0.7}) {
    TableInputs compute = inputs;
    compute.compute_scale *= kAssumedPeakShare / share;
    out.push_back({"compute at " + percent(share) + " of peak", compute, fitted});
  }
  for (const double factor : {0.9, 1.1}) {
    coll::model::CostParams fit = fitted;
    fit.inter.alpha_s *= factor;
    fit.inter.beta_s_per_byte *= factor;
    out.push_back({std::string("inter-node fit ") + (factor < 1 ? "-10 %" : "+10 %"), inputs, fit});
  }
  coll::model::CostParams per_phase = fitted;
  per_phase.charging.alpha_once_per_phase = true;
  out.push_back({"alpha once per phase, not per message", inputs, per_phase});
  return out;
}

struct Conclusion {
  std::string top;  // the paper-era strategy with the highest efficiency at 16 GPUs
  double top_efficiency = 0, best_efficiency = 0;
};

Conclusion conclude(const Condition& condition, const std::string& model) {
  Conclusion out;
  for (const auto& strategy : strategies()) {
    if (!strategy.paper_era && strategy.name != "best") continue;
    const TableCell cell = cell_under(condition.inputs, condition.params, strategy, model, 4, 4);
    if (strategy.name == "best") {
      out.best_efficiency = cell.efficiency;
    } else if (out.top.empty() || cell.efficiency > out.top_efficiency) {
      out.top = strategy.name;
      out.top_efficiency = cell.efficiency;
    }
  }
  return out;
}

std::string points(double value) {
  char text[32];
  // + 0.0 turns a -0 (a loss of less than half a point) into 0.
  std::snprintf(text, sizeof text, "%+.0f", std::round(value * 100) + 0.0);
  return text;
}

}  // namespace

std::string sensitivity_markdown(const TableInputs& inputs) {
  const auto list = conditions(inputs);
  std::string out =
      "\nSensitivity at 16 GPUs: per model, the paper-era strategy that scales best and its "
      "efficiency (\"scales well\" at " +
      percent(kScalesWell) +
      " or more), then best's efficiency minus it, in points.\n\n| condition |";
  for (const auto& model : paper_models()) out += " " + model + " |";
  out += "\n|---|";
  for (std::size_t i = 0; i < paper_models().size(); ++i) out += "---|";
  out += "\n";
  std::vector<std::vector<Conclusion>> table;
  for (const auto& condition : list) {
    out += "| " + condition.name + " |";
    table.emplace_back();
    for (const auto& model : paper_models()) {
      const Conclusion c = conclude(condition, model);
      table.back().push_back(c);
      out += " " + c.top + " " + percent(c.top_efficiency) + ", best " +
             points(c.best_efficiency - c.top_efficiency) + " |";
    }
    out += "\n";
  }
  out += "\nRobust (the same in every row):";
  for (std::size_t m = 0; m < paper_models().size(); ++m) {
    bool scales = true, fails = true;
    for (const auto& row : table) {
      scales &= row[m].top_efficiency >= kScalesWell;
      fails &= row[m].top_efficiency < kScalesWell;
    }
    out += std::string(m ? ";" : "") + " " + paper_models()[m] + ": " +
           (scales  ? "a paper-era strategy scales well"
            : fails ? "no paper-era strategy scales well"
                    : "whether a paper-era strategy scales well depends on the condition");
  }
  return out + "\n";
}

nlohmann::ordered_json sensitivity_json(const TableInputs& inputs) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& condition : conditions(inputs)) {
    nlohmann::ordered_json models;
    for (const auto& model : paper_models()) {
      const Conclusion c = conclude(condition, model);
      models[model] = {{"top_paper_era", c.top},
                       {"top_efficiency", c.top_efficiency},
                       {"best_efficiency", c.best_efficiency}};
    }
    rows.push_back({{"condition", condition.name}, {"models", models}});
  }
  return rows;
}

}  // namespace coll::study
