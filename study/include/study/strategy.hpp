// Named gradient-aggregation strategies: how each framework of the paper (and two of today's
// baselines) moves a training iteration's gradients, as data: the all-reduce algorithm and its
// placement, the granularity (fusion policy), whether communication overlaps backward, and the
// model definition the framework trains. docs/strategies.md gives the source of every choice.
#pragma once

#include <string>
#include <vector>

namespace coll::study {

struct Strategy {
  std::string name;
  std::string summary;  // one line, for --strategy list
  // A library algorithm, or "auto" (the cost model's choice per message).
  std::string algorithm;
  // hierarchical, hierarchical_leader: the algorithm across nodes (COLL_HIER_INTER); else "".
  std::string inter;
  bool servers_per_node = false;  // ps (directly or across nodes): one server on each node
  std::string fusion;             // a fusion policy (fusion_plan.hpp), "layer" included
  bool overlap = true;            // each bucket starts when its last gradient is ready (WFBP)
  bool paper_era = true;          // a framework of the paper (not a baseline or `best`)
  // The model table variant per model ("alexnet", "googlenet", "resnet50"); an empty variant
  // means the model's default (the Caffe definition, assumed to be what the paper's Caffe-MPI
  // ran).
  std::string alexnet, googlenet, resnet50;

  const std::string& variant_for(const std::string& model) const;  // "" for another model
};

// Every strategy, in the order tables list them.
const std::vector<Strategy>& strategies();
// Throws coll::Error (InvalidArgument) naming the known strategies when `name` is unknown.
const Strategy& find_strategy(const std::string& name);
// One line per strategy: name, summary, algorithm, granularity, overlap, tables.
std::string strategy_list();

}  // namespace coll::study
