// What the modelled tables say about the paper's findings, and the measured numbers beside them.
// The paper's findings are paraphrased from the project's reference (its text was never
// available); Caffe-MPI 2.0's 16-GPU speedups are the figures its README reports, as the
// reference records them (the README itself was not read here). Verdicts are computed from the
// cells, with the thresholds they use printed beside them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coll/model/link_params.hpp"
#include "study/paper_tables.hpp"

namespace coll::study {

// A measured scaling figure of a cluster of the testbed's class.
struct ReferencePoint {
  std::string model;
  int gpus;
  double speedup;
  int batch;  // per GPU, as the tables' batches (assumed: the README gives "batch N")
};
const std::vector<ReferencePoint>& caffe_mpi_readme_speedups();

// The reference points beside the modelled caffe-mpi cells, and one line per finding of the
// paper ("reproduced", "contradicted", "not tested", or "depends on ..."), with why.
std::string findings_markdown(const std::vector<TableCell>& cells,
                              const coll::model::CostParams& params, bool batch_per_node);
nlohmann::ordered_json findings_json(const std::vector<TableCell>& cells,
                                     const coll::model::CostParams& params, bool batch_per_node);

}  // namespace coll::study
