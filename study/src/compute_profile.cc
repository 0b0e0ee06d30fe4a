// Compute profiles.
//
// P40 preset, sources and assumptions:
//  - Peak: 11.76 TFLOPS fp32 (NVIDIA Tesla P40 datasheet; 3840 cores x 2 x 1531 MHz boost).
//  - Sustained fraction 0.5 (5.88 TFLOPS) is an assumption, not a measurement from the paper
//    (its per-phase Table 5 is not available to us). Reasoning: cuDNN/cuBLAS fp32 kernels on
//    Pascal reach roughly 60-80 % of peak on large convolutions and GEMMs, but a whole backward
//    also runs layers our FLOP count leaves out (ReLU, pooling, LRN, BN statistics: memory bound,
//    counted as 0 or 2 FLOPs per element), and a P40 under its 250 W cap runs below the boost
//    clock (its 1303 MHz base clock alone gives 10.0 TFLOPS). Override it with p40_profile's
//    rate, a compute_scale, or a measured CSV.
//  - Per-GPU batch sizes: the Caffe-MPI 2.0 README (reference/paper.md) reports its 4 x 4 P40
//    runs with AlexNet batch 1024, GoogLeNet 128 and ResNet 32. We read them as per-GPU
//    mini-batches (weak scaling, assuming the paper's framework comparison ran every GPU count
//    with a fixed per-GPU batch); 1024 x 227^2 AlexNet activations fit the P40's 24 GB. This
//    reading is an assumption: the paper's own setting table (T4) is not available to us.
#include "study/compute_profile.hpp"

#include <cmath>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>

#include "coll/error.hpp"

namespace coll::study {
namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(Status::InvalidArgument, message);
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

// Splits "a,b" into exactly two trimmed fields; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> two_fields(const std::string& line) {
  const auto comma = line.find(',');
  if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos) {
    return std::nullopt;
  }
  return std::make_pair(trim(line.substr(0, comma)), trim(line.substr(comma + 1)));
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The layers of consecutive tensors: (name, first tensor index) per layer, backward order.
std::vector<std::pair<std::string, std::size_t>> layer_runs(
    const std::vector<std::string>& tensor_layers) {
  std::vector<std::pair<std::string, std::size_t>> runs;
  for (std::size_t i = 0; i < tensor_layers.size(); ++i) {
    if (i == 0 || tensor_layers[i] != tensor_layers[i - 1]) runs.emplace_back(tensor_layers[i], i);
  }
  return runs;
}

ComputeProfile parse_csv(std::istream& in, const std::string& origin, std::size_t tensor_count,
                         const std::vector<std::string>* tensor_layers) {
  enum class Form { Unknown, Index, Layer } form = Form::Unknown;
  ComputeProfile profile;
  profile.source = "csv " + origin;
  profile.backward_s.assign(tensor_count, 0.0);
  std::vector<std::pair<std::string, std::size_t>> runs;
  std::size_t rows = 0;
  std::string raw;
  for (std::size_t number = 1; std::getline(in, raw); ++number) {
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    const auto fields = two_fields(line);
    if (!fields) invalid(where + "expected two comma-separated fields, got '" + line + "'");
    if (form == Form::Unknown) {
      if (fields->first == "index" && fields->second == "backward_ms") {
        form = Form::Index;
      } else if (fields->first == "layer" && fields->second == "backward_ms") {
        if (!tensor_layers) invalid(where + "a per-layer profile needs the model's layer names");
        form = Form::Layer;
        runs = layer_runs(*tensor_layers);
      } else {
        invalid(where + "header must be 'index,backward_ms' or 'layer,backward_ms', got '" + line +
                "'");
      }
      continue;
    }
    const auto ms = parse_number(fields->second);
    if (!ms || *ms < 0) {
      invalid(where + "backward_ms must be a finite number >= 0, got '" + fields->second + "'");
    }
    const std::size_t limit = form == Form::Index ? tensor_count : runs.size();
    if (rows >= limit) {
      invalid(where + "more rows than the model's " + std::to_string(limit) +
              (form == Form::Index ? " tensors" : " layers"));
    }
    if (form == Form::Index) {
      const auto index = parse_number(fields->first);
      if (!index || *index != static_cast<double>(rows)) {
        invalid(where + "expected index " + std::to_string(rows) + ", got '" + fields->first + "'");
      }
      profile.backward_s[rows] = *ms / 1e3;
    } else {
      if (fields->first != runs[rows].first) {
        invalid(where + "expected layer '" + runs[rows].first + "' (layer " + std::to_string(rows) +
                " in backward order), got '" + fields->first + "'");
      }
      profile.backward_s[runs[rows].second] = *ms / 1e3;
    }
    ++rows;
  }
  if (form == Form::Unknown) invalid(origin + ": no header line (index,backward_ms)");
  const std::size_t expected = form == Form::Index ? tensor_count : runs.size();
  if (rows != expected) {
    invalid(origin + ": " + std::to_string(rows) + " rows, but the model has " +
            std::to_string(expected) + (form == Form::Index ? " tensors" : " layers"));
  }
  return profile;
}

std::ifstream open_or_throw(const std::string& path) {
  std::ifstream in(path);
  if (!in) invalid("cannot open compute profile '" + path + "'");
  return in;
}

}  // namespace

double ComputeProfile::total_s() const {
  return std::accumulate(backward_s.begin(), backward_s.end(), 0.0);
}

std::vector<double> ComputeProfile::ready_s() const {
  std::vector<double> ready(backward_s.size());
  std::partial_sum(backward_s.begin(), backward_s.end(), ready.begin());
  return ready;
}

ComputeProfile flops_profile(const std::vector<TensorFlops>& tensors, int batch_size,
                             double sustained_flops, const std::string& source) {
  if (batch_size < 1) invalid("batch size must be >= 1, got " + std::to_string(batch_size));
  if (!(sustained_flops > 0) || !std::isfinite(sustained_flops)) {
    invalid("sustained FLOP rate must be a finite number > 0");
  }
  ComputeProfile profile;
  profile.source = source;
  profile.backward_s.assign(tensors.size(), 0.0);
  std::size_t first = 0;  // the current layer's first tensor
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const double flops = tensors[i].forward_flops;
    if (!(flops >= 0) || !std::isfinite(flops)) {
      invalid("tensor " + std::to_string(i) + " (layer '" + tensors[i].layer +
              "'): forward FLOPs must be finite and >= 0");
    }
    if (i > 0 && tensors[i].layer != tensors[i - 1].layer) first = i;
    profile.backward_s[first] += kBackwardPerForward * flops * batch_size / sustained_flops;
  }
  return profile;
}

ComputeProfile p40_profile(const std::vector<TensorFlops>& tensors, int batch_size,
                           double sustained_tflops) {
  std::ostringstream source;
  source << "p40: backward = " << kBackwardPerForward << " x forward FLOPs x batch " << batch_size
         << " / " << sustained_tflops << " TFLOPS (Tesla P40, peak 11.76)";
  return flops_profile(tensors, batch_size, sustained_tflops * 1e12, source.str());
}

int p40_batch_size(std::string_view model) {
  if (model == "alexnet") return 1024;
  if (model == "googlenet") return 128;
  if (model == "resnet50") return 32;
  invalid("no P40 batch size for model '" + std::string(model) +
          "' (known: alexnet, googlenet, resnet50)");
}

ComputeProfile p40_preset(std::string_view model, const std::vector<TensorFlops>& tensors) {
  return p40_profile(tensors, p40_batch_size(model));
}

ComputeProfile scale_profile(const ComputeProfile& profile, double compute_scale) {
  if (!(compute_scale > 0) || !std::isfinite(compute_scale)) {
    invalid("compute scale must be a finite number > 0");
  }
  ComputeProfile scaled = profile;
  for (double& seconds : scaled.backward_s) seconds *= compute_scale;
  if (compute_scale != 1.0) {
    std::ostringstream source;
    source << profile.source << ", scaled x" << compute_scale;
    scaled.source = source.str();
  }
  return scaled;
}

ComputeProfile parse_profile_csv(std::istream& in, const std::string& origin,
                                 const std::vector<std::string>& tensor_layers) {
  return parse_csv(in, origin, tensor_layers.size(), &tensor_layers);
}

ComputeProfile load_profile_csv(const std::string& path,
                                const std::vector<std::string>& tensor_layers) {
  auto in = open_or_throw(path);
  return parse_csv(in, path, tensor_layers.size(), &tensor_layers);
}

ComputeProfile load_profile_csv(const std::string& path, std::size_t expected_tensor_count) {
  auto in = open_or_throw(path);
  return parse_csv(in, path, expected_tensor_count, nullptr);
}

}  // namespace coll::study
