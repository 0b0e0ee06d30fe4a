// The strategy table. Sources (details, and how statements about the paper are marked, in
// docs/strategies.md):
//  cntk       Shi et al. 2017, finding 3 (paraphrased from the findings as summarized in the
//             project's reference, shared/reference/paper.md): CNTK does not hide gradient
//             communication; it all-reduces layer by layer (weight and bias of a layer together)
//             over MPI/NCCL after the backward pass (assumed). Its own model definitions are not
//             tabulated here: it replays the Caffe definitions (assumed; which definitions the
//             paper's CNTK runs trained is not known to the project).
//  mxnet      kvstore dist_sync with device-side reduction: the GPUs of a node are reduced
//             first, then the node pushes to / pulls from parameter servers (one per node),
//             key by key, each as soon as its gradient is ready (the engine's dependencies).
//  tensorflow tf_cnn_benchmarks --variable_update=parameter_server: variables sharded over the
//             ps tasks (one per node), every GPU tower's gradient sent to them per tensor,
//             overlapped by the dataflow graph.
//  caffe-mpi  Inspur Caffe-MPI 2.0 (its code, as the project's reference summarizes it; that the
//             paper ran version 2.0 is assumed): one flat NCCL 2.0 ring over all GPUs, per
//             parameter blob, started as backward produces each blob; it moves every blob
//             Caffe holds, BatchNorm's statistics included.
//  horovod    Horovod with HOROVOD_HIERARCHICAL_ALLREDUCE and its 64 MiB fusion threshold.
//  ddp        PyTorch DistributedDataParallel: NCCL ring, 25 MiB buckets, overlapped.
//  best       the library's own choice: algorithm per message and fusion plan by the cost model
//             (fusion auto compares none, threshold, buckets and MG-WFBP), overlapped.
#include "study/strategy.hpp"

#include "coll/error.hpp"

namespace coll::study {

const std::string& Strategy::variant_for(const std::string& model) const {
  static const std::string none;
  if (model == "alexnet") return alexnet;
  if (model == "googlenet") return googlenet;
  if (model == "resnet50") return resnet50;
  return none;
}

const std::vector<Strategy>& strategies() {
  static const std::vector<Strategy> table{
      {"cntk", "CNTK: per-layer flat all-reduce after the whole backward pass (no overlap)", "ring",
       "", false, "layer", false, true, "bvlc_caffe", "bvlc_caffe", "caffe_he"},
      {"mxnet",
       "MXNet kvstore dist_sync/device: reduce inside the node, then parameter servers (one per "
       "node) across nodes, per tensor, overlapped",
       "hierarchical_leader", "ps", true, "none", true, true, "mxnet", "mxnet", "mxnet"},
      {"tensorflow",
       "TensorFlow (tf_cnn_benchmarks): every GPU pushes to parameter servers (one per node, "
       "variables sharded), per tensor, overlapped",
       "ps", "", true, "none", true, true, "tf_cnn_benchmarks", "tf_cnn_benchmarks",
       "tf_cnn_benchmarks"},
      {"caffe-mpi",
       "Caffe-MPI 2.0: one flat NCCL ring over every GPU, per blob (BatchNorm statistics "
       "included), overlapped",
       "ring", "", false, "none", true, true, "bvlc_caffe", "bvlc_caffe", "caffe_he_all_blobs"},
      {"horovod", "Horovod: hierarchical all-reduce, 64 MiB fusion threshold, overlapped",
       "hierarchical", "ring", false, "threshold:64M", true, false, "torchvision",
       "torchvision_aux", "torchvision"},
      {"ddp", "PyTorch DDP: flat NCCL ring, 25 MiB buckets, overlapped", "ring", "", false,
       "buckets:25M", true, false, "torchvision", "torchvision_aux", "torchvision"},
      {"best",
       "libcoll's own plan: the cost model's algorithm per bucket and fusion plan, overlapped",
       "auto", "", false, "auto", true, false, "", "", ""},
  };
  return table;
}

const Strategy& find_strategy(const std::string& name) {
  std::string known;
  for (const auto& strategy : strategies()) {
    if (strategy.name == name) return strategy;
    known += (known.empty() ? "" : ", ") + strategy.name;
  }
  throw coll::Error(coll::Status::InvalidArgument,
                    "unknown strategy '" + name + "' (known: " + known + ", list)");
}

std::string strategy_list() {
  std::string out =
      "# strategies: how each framework aggregated gradients, as modelled here (assumed from "
      "the frameworks' code and docs, not measured on the paper's testbed; sources per choice: "
      "docs/strategies.md)\n";
  for (const auto& s : strategies()) {
    const std::string algorithm = s.inter.empty() ? s.algorithm : s.algorithm + " + " + s.inter;
    out += s.name + "\n    " + s.summary + "\n    algorithm " + algorithm +
           (s.servers_per_node ? " (one server per node)" : "") + ", granularity " + s.fusion +
           ", overlap " + (s.overlap ? "on" : "off") + ", tables alexnet " +
           (s.alexnet.empty() ? "default" : s.alexnet) + ", googlenet " +
           (s.googlenet.empty() ? "default" : s.googlenet) + ", resnet50 " +
           (s.resnet50.empty() ? "default" : s.resnet50) + "\n";
  }
  return out;
}

}  // namespace coll::study
