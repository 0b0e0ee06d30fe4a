// Model tables: the learnable gradient tensors of a network, one per row, in the order backward
// produces them (classifier first, first convolution last), with the forward FLOPs of the layer
// that owns each tensor. The tables are CSV files, <models_dir>/<model>_<variant>.csv, written by
// bench/models/generate.py; each names the model definition it was derived from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace coll::study {

struct GradientTensor {
  std::string layer, name;  // e.g. "inception_4a/1x1", "weight"
  std::vector<std::int64_t> shape;
  std::size_t elements = 0;  // product of shape
  double forward_flops = 0;  // per sample, 2 x MACs of the owning layer; only on its weight row
};

struct ModelTable {
  std::string model, variant, source;   // source: the definition the table was derived from
  std::vector<GradientTensor> tensors;  // backward order
  std::size_t total_elements() const;
  // Where each tensor starts in one flat buffer holding them all in backward order, as a
  // framework lays out its parameters' gradients.
  std::vector<std::size_t> flat_offsets() const;
};

// Reads <models_dir>/<model>_<variant>.csv; an empty variant means default_variant(model).
// Throws coll::Error(InvalidArgument) for an unknown model or variant (naming the valid ones) and
// for a malformed table (naming the file and line).
ModelTable load_model_table(const std::string& models_dir, const std::string& model,
                            const std::string& variant);

// Parses one table; `origin` names it in error messages. Model and variant come from the
// "# model:" and "# variant:" header comments (empty when absent).
ModelTable parse_model_table(std::istream& in, const std::string& origin);

// The variants with a table in models_dir, sorted; empty when the model has none.
std::vector<std::string> model_variants(const std::string& models_dir, const std::string& model);

// The variant a model replays unless told otherwise: the Caffe definition, assumed to be what the
// paper's Caffe-MPI ran.
std::string default_variant(const std::string& model);

}  // namespace coll::study
