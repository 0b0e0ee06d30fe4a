// Per-tensor backward compute times: when backward makes each gradient tensor ready. Derived from
// the model table's forward FLOPs and a sustained GPU rate (the paper's Tesla P40 as a preset), or
// read from a CSV the user measured. Tensors are in backward order; the tensors of one layer
// become ready together, so a layer's whole backward time sits on its first tensor and its other
// tensors get 0.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace coll::study {

struct ComputeProfile {
  std::string source;  // where the times came from, for reports
  // Per tensor index, backward order: seconds from the previous tensor's readiness (the start of
  // backward for tensor 0) to this tensor's.
  std::vector<double> backward_s;

  double total_s() const;               // the whole backward pass
  std::vector<double> ready_s() const;  // cumulative: when each tensor's gradient is ready
};

// One row per gradient tensor, backward order: the owning layer and the forward FLOPs per sample
// of that layer (on one row of the layer, usually the weight's; 0 on the others).
struct TensorFlops {
  std::string layer;
  double forward_flops = 0;
};

// Convention: backward costs kBackwardPerForward x the forward FLOPs of a layer (one pass for the
// gradient w.r.t. the layer's input, one for the gradient w.r.t. its weights, each as many
// multiply-accumulates as the forward pass; the usual "training = 3 x forward" rule, e.g. Kaplan
// et al. 2020, "Scaling Laws for Neural Language Models", section 2.1).
inline constexpr double kBackwardPerForward = 2.0;

// Tesla P40 fp32 peak: 3840 CUDA cores x 2 FLOP x 1531 MHz boost = 11.76 TFLOPS (NVIDIA datasheet).
inline constexpr double kP40PeakFlops = 11.76e12;
// Sustained fraction of that peak over a whole backward pass: an assumption, see
// compute_profile.cc.
inline constexpr double kP40SustainedFraction = 0.5;

// backward_s of a layer = kBackwardPerForward x (sum of its tensors' forward_flops) x batch_size /
// sustained_flops, given to the layer's first tensor (consecutive rows with the same layer name
// form one layer). Throws coll::Error(InvalidArgument) for batch_size < 1, a non-positive rate or
// negative/non-finite FLOPs.
ComputeProfile flops_profile(const std::vector<TensorFlops>& tensors, int batch_size,
                             double sustained_flops, const std::string& source);

// flops_profile on a Tesla P40 at sustained_tflops (default: kP40SustainedFraction of peak).
ComputeProfile p40_profile(const std::vector<TensorFlops>& tensors, int batch_size,
                           double sustained_tflops = kP40PeakFlops * kP40SustainedFraction / 1e12);

// The per-GPU mini-batch for a model ("alexnet" 1024, "googlenet" 128, "resnet50" 32: the batch
// sizes of the Caffe-MPI 2.0 README, read per GPU by assumption; the paper's own are not known to
// the project; see compute_profile.cc); throws coll::Error(InvalidArgument) for another model.
int p40_batch_size(std::string_view model);
// The "p40" preset: p40_profile at the model's p40_batch_size.
ComputeProfile p40_preset(std::string_view model, const std::vector<TensorFlops>& tensors);

// Every time multiplied by compute_scale (> 0, finite; else coll::Error(InvalidArgument)).
ComputeProfile scale_profile(const ComputeProfile& profile, double compute_scale);

// A measured profile. Lines starting with '#' and blank lines are skipped; the first other line
// is the header, one of
//   index,backward_ms  one row per tensor, indices 0..n-1 in order
//   layer,backward_ms  one row per layer in backward order, named as in tensor_layers (the layer
//                      of each tensor, backward order); the time goes to the layer's first tensor
// Throws coll::Error(InvalidArgument) naming the origin and line on malformed input.
ComputeProfile parse_profile_csv(std::istream& in, const std::string& origin,
                                 const std::vector<std::string>& tensor_layers);
ComputeProfile load_profile_csv(const std::string& path,
                                const std::vector<std::string>& tensor_layers);
// The index form only (layer rows are refused: they need the layer names).
ComputeProfile load_profile_csv(const std::string& path, std::size_t expected_tensor_count);

}  // namespace coll::study
