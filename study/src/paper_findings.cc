#include "study/paper_findings.hpp"

#include <algorithm>
#include <cstdio>

namespace coll::study {
namespace {

constexpr char kReadmeSource[] =
    "the Caffe-MPI 2.0 README, as the project's reference (shared/reference/paper.md) reports it; "
    "the README itself was not read";
constexpr int kAcross = 16;  // 4 servers x 4 GPUs

struct Finding {
  int number;
  std::string claim;    // paraphrased from the project's reference
  std::string verdict;  // reproduced, contradicted, not tested, depends on ...
  std::string why;
};

// "reproduced" where every model shows what the finding claims, "contradicted" where none does.
std::string verdict(int agreeing, int models) {
  return agreeing == models ? "reproduced"
         : agreeing == 0    ? "contradicted"
                            : "depends on the model";
}

std::vector<std::string> models_of(const std::vector<TableCell>& cells) {
  std::vector<std::string> models;
  for (const auto& cell : cells) {
    if (std::find(models.begin(), models.end(), cell.model) == models.end()) {
      models.push_back(cell.model);
    }
  }
  return models;
}

std::string text(const char* format, double value) {
  char out[64];
  std::snprintf(out, sizeof out, format, value);
  return out;
}

// Finding 3: does the strategy that does not overlap (cntk) scale worse than the overlapped
// paper-era ones (mxnet, tensorflow) on every model?
Finding overlap_finding(const std::vector<TableCell>& cells) {
  Finding f{3,
            "hiding gradient communication behind backward scales better: CNTK does not, MXNet "
            "and TensorFlow do",
            "", ""};
  int models = 0, worse = 0;
  for (const auto& model : models_of(cells)) {
    const TableCell* cntk = find_cell(cells, model, "cntk", kAcross);
    const TableCell* mxnet = find_cell(cells, model, "mxnet", kAcross);
    const TableCell* tensorflow = find_cell(cells, model, "tensorflow", kAcross);
    if (!cntk || !mxnet || !tensorflow) continue;
    ++models;
    worse += cntk->efficiency < std::min(mxnet->efficiency, tensorflow->efficiency);
    f.why += (f.why.empty() ? "" : "; ") + model + " cntk " + percent(cntk->efficiency) +
             ", mxnet " + percent(mxnet->efficiency) + ", tensorflow " +
             percent(tensorflow->efficiency);
  }
  if (models == 0) return {};
  f.verdict = verdict(worse, models);
  f.why = "efficiency at " + std::to_string(kAcross) + " GPUs: " + f.why;
  return f;
}

// Finding 4: no paper-era strategy scales well on 4 servers, the network being much slower than
// PCIe.
Finding across_servers_finding(const std::vector<TableCell>& cells,
                               const coll::model::CostParams& params, bool batch_per_node) {
  Finding f{4,
            "across four dense GPU servers no framework scaled well: 56 Gb/s InfiniBand is much "
            "slower than PCIe inside a server",
            "", ""};
  int models = 0, scaled = 0;
  for (const auto& model : models_of(cells)) {
    const TableCell* top = nullptr;
    for (const char* name : {"cntk", "mxnet", "tensorflow", "caffe-mpi"}) {
      const TableCell* cell = find_cell(cells, model, name, kAcross);
      if (cell && (!top || cell->efficiency > top->efficiency)) top = cell;
    }
    if (!top) continue;
    ++models;
    scaled += top->efficiency >= kScalesWell;
    f.why +=
        (f.why.empty() ? "" : "; ") + model + " " + top->strategy + " " + percent(top->efficiency);
  }
  if (models == 0) return {};
  f.verdict = verdict(models - scaled, models);  // the finding: none scaled well
  const double pcie_gbs = 1e-9 / params.intra.beta_s_per_byte;
  const double network_gbs = 1e-9 / params.inter.beta_s_per_byte;
  f.why = "the best paper-era strategy at " + std::to_string(kAcross) +
          " GPUs (\"scaled well\": " + percent(kScalesWell) +
          " or more, a threshold assumed here): " + f.why + ", at batches " +
          (batch_per_node ? "per node" : "per GPU") +
          " (the verdict turns with the batch: compare --batch-per gpu and node). In the preset a "
          "node's network link moves " +
          text("%.1f", network_gbs) + " GB/s against " + text("%.1f", pcie_gbs) +
          " GB/s for one GPU's PCIe link (" + text("%.1fx", pcie_gbs / network_gbs) +
          "), and the network is shared by the node's 4 GPUs";
  return f;
}

std::vector<Finding> findings(const std::vector<TableCell>& cells,
                              const coll::model::CostParams& params, bool batch_per_node) {
  std::vector<Finding> out{
      {1,
       "for a shallow network (AlexNet) at large batches, loading training data can bottleneck "
       "fast GPUs",
       "not tested", "the model has no data loading: it is assumed hidden (t_io = 0)"},
      {2, "cuDNN's autotuning and the input layout (NCHW or NHWC) matter", "not tested",
       "compute comes from each layer's FLOPs at one share of the P40's peak "
       "(docs/compute_profile.md), the same for every framework"}};
  for (Finding f :
       {overlap_finding(cells), across_servers_finding(cells, params, batch_per_node)}) {
    if (!f.verdict.empty()) out.push_back(f);
  }
  return out;
}

}  // namespace

const std::vector<ReferencePoint>& caffe_mpi_readme_speedups() {
  static const std::vector<ReferencePoint> points{
      {"alexnet", 16, 14.65, 1024}, {"googlenet", 16, 14.25, 128}, {"resnet50", 16, 15.34, 32}};
  return points;
}

std::string findings_markdown(const std::vector<TableCell>& cells,
                              const coll::model::CostParams& params, bool batch_per_node) {
  std::string out;
  for (const auto& point : caffe_mpi_readme_speedups()) {
    const TableCell* modelled = find_cell(cells, point.model, "caffe-mpi", point.gpus);
    if (!modelled) continue;
    if (out.empty()) {
      out = "\nMeasured beside modelled: Caffe-MPI 2.0's speedups on 4 nodes x 4 P40 (" +
            std::string(kReadmeSource) + "):\n";
    }
    const double measured = point.speedup / point.gpus;
    out += "- " + point.model + ": README " + text("%.2fx", point.speedup) + " at " +
           std::to_string(point.gpus) + " GPUs, batch " + std::to_string(point.batch) + " (" +
           percent(measured) + " efficiency); modelled caffe-mpi at batch " +
           std::to_string(modelled->batch_per_gpu) + " per GPU " + percent(modelled->efficiency) +
           " (" + text("%+.0f points", 100 * (modelled->efficiency - measured)) + ")\n";
  }
  const auto list = findings(cells, params, batch_per_node);
  if (list.empty()) return out;
  out +=
      "\nThe paper's findings (paraphrased from the project's reference) against these tables:\n";
  for (const auto& f : list) {
    out += std::to_string(f.number) + ". " + f.claim + ": **" + f.verdict + "** — " + f.why + "\n";
  }
  return out;
}

nlohmann::ordered_json findings_json(const std::vector<TableCell>& cells,
                                     const coll::model::CostParams& params, bool batch_per_node) {
  nlohmann::ordered_json references = nlohmann::ordered_json::array();
  for (const auto& point : caffe_mpi_readme_speedups()) {
    const TableCell* modelled = find_cell(cells, point.model, "caffe-mpi", point.gpus);
    references.push_back(
        {{"model", point.model},
         {"gpus", point.gpus},
         {"speedup", point.speedup},
         {"efficiency", point.speedup / point.gpus},
         {"batch", point.batch},
         {"source", kReadmeSource},
         {"modelled_caffe_mpi_efficiency",
          modelled ? nlohmann::ordered_json(modelled->efficiency) : nlohmann::ordered_json()}});
  }
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& f : findings(cells, params, batch_per_node)) {
    list.push_back(
        {{"finding", f.number}, {"claim", f.claim}, {"verdict", f.verdict}, {"why", f.why}});
  }
  return {{"references", references}, {"findings", list}};
}

}  // namespace coll::study
