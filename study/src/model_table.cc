#include "study/model_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <string_view>
#include <system_error>
#include <utility>

#include "coll/error.hpp"

namespace coll::study {
namespace {

constexpr std::string_view kHeader = "index,layer,tensor,shape,elements,forward_flops";

// Built-in models and the variant each replays by default.
constexpr std::pair<std::string_view, std::string_view> kDefaults[] = {
    {"alexnet", "bvlc_caffe"}, {"googlenet", "bvlc_caffe"}, {"resnet50", "caffe_he"}};

[[noreturn]] void fail(const std::string& message) {
  throw coll::Error(coll::Status::InvalidArgument, message);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// Parses all of `text` as a number; false on junk, overflow or an empty field.
template <typename T>
bool parse_number(std::string_view text, T& value) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return !text.empty() && ec == std::errc() && ptr == end;
}

// Keeps the "key: value" header comments that describe the table.
void read_comment(std::string_view line, ModelTable& table, std::string& totals) {
  line.remove_prefix(1);
  std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  std::string_view key = line.substr(0, colon);
  key.remove_prefix(std::min(key.find_first_not_of(' '), key.size()));
  std::string value(line.substr(std::min(line.find_first_not_of(' ', colon + 1), line.size())));
  if (key == "model") table.model = value;
  if (key == "variant") table.variant = value;
  if (key == "source") table.source = value;
  if (key == "totals") totals = value;
}

GradientTensor parse_row(std::string_view line, std::size_t index, const std::string& where) {
  auto fields = split(line, ',');
  if (fields.size() != 6) {
    fail(where + ": expected 6 comma-separated fields (" + std::string(kHeader) + "), got " +
         std::to_string(fields.size()));
  }
  std::size_t row_index = 0;
  if (!parse_number(fields[0], row_index) || row_index != index) {
    fail(where + ": index '" + std::string(fields[0]) + "', expected " + std::to_string(index));
  }
  GradientTensor t;
  t.layer = fields[1];
  t.name = fields[2];
  if (t.layer.empty() || t.name.empty()) fail(where + ": empty layer or tensor name");
  std::size_t product = 1;
  for (auto dim : split(fields[3], 'x')) {
    std::int64_t d = 0;
    if (!parse_number(dim, d) || d <= 0) {
      fail(where + ": bad shape '" + std::string(fields[3]) +
           "' (want positive dims like 96x3x11x11)");
    }
    if (product > std::numeric_limits<std::size_t>::max() / static_cast<std::size_t>(d)) {
      fail(where + ": shape '" + std::string(fields[3]) + "' is too large");
    }
    product *= static_cast<std::size_t>(d);
    t.shape.push_back(d);
  }
  if (!parse_number(fields[4], t.elements)) {
    fail(where + ": bad element count '" + std::string(fields[4]) + "'");
  }
  if (t.elements != product) {
    fail(where + ": elements " + std::to_string(t.elements) + " != product of shape " +
         std::string(fields[3]) + " = " + std::to_string(product));
  }
  if (!parse_number(fields[5], t.forward_flops) || !std::isfinite(t.forward_flops) ||
      t.forward_flops < 0) {
    fail(where + ": bad forward_flops '" + std::string(fields[5]) + "'");
  }
  return t;
}

// "tensors=N elements=M ..." in the header must agree with the rows, when present.
void check_totals(const std::string& totals, const ModelTable& table, const std::string& origin) {
  for (auto item : split(totals, ' ')) {
    std::size_t actual = 0;
    if (item.starts_with("tensors=")) {
      actual = table.tensors.size();
    } else if (item.starts_with("elements=")) {
      actual = table.total_elements();
    } else {
      continue;
    }
    std::size_t declared = 0;
    if (!parse_number(item.substr(item.find('=') + 1), declared) || declared != actual) {
      fail(origin + ": header declares " + std::string(item) + " but the rows hold " +
           std::to_string(actual));
    }
  }
}

}  // namespace

std::size_t ModelTable::total_elements() const {
  return std::accumulate(tensors.begin(), tensors.end(), std::size_t{0},
                         [](std::size_t sum, const GradientTensor& t) { return sum + t.elements; });
}

std::vector<std::size_t> ModelTable::flat_offsets() const {
  std::vector<std::size_t> offsets;
  std::size_t next = 0;
  for (const auto& tensor : tensors) {
    offsets.push_back(next);
    next += tensor.elements;
  }
  return offsets;
}

ModelTable parse_model_table(std::istream& in, const std::string& origin) {
  ModelTable table;
  std::string line, totals;
  bool header_seen = false;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string where = origin + ":" + std::to_string(number);
    if (line.empty()) continue;
    if (line.front() == '#') {
      if (!header_seen) read_comment(line, table, totals);
      continue;
    }
    if (!header_seen) {
      if (line != kHeader)
        fail(where + ": expected the header line '" + std::string(kHeader) + "'");
      header_seen = true;
      continue;
    }
    table.tensors.push_back(parse_row(line, table.tensors.size(), where));
  }
  if (in.bad()) fail(origin + ": read error");
  if (table.tensors.empty()) fail(origin + ": no tensor rows");
  check_totals(totals, table, origin);
  return table;
}

std::vector<std::string> model_variants(const std::string& models_dir, const std::string& model) {
  namespace fs = std::filesystem;
  std::vector<std::string> variants;
  std::error_code ec;
  fs::directory_iterator it(models_dir, ec);
  if (ec) fail("cannot read models directory '" + models_dir + "': " + ec.message());
  const std::string prefix = model + "_", suffix = ".csv";
  for (const auto& entry : it) {
    std::string file = entry.path().filename().string();
    if (file.size() > prefix.size() + suffix.size() && file.starts_with(prefix) &&
        file.ends_with(suffix)) {
      variants.push_back(file.substr(prefix.size(), file.size() - prefix.size() - suffix.size()));
    }
  }
  std::sort(variants.begin(), variants.end());
  return variants;
}

std::string default_variant(const std::string& model) {
  std::vector<std::string> models;
  for (auto [name, variant] : kDefaults) {
    if (name == model) return std::string(variant);
    models.emplace_back(name);
  }
  fail("unknown model '" + model + "' (valid: " + join(models) + ")");
}

ModelTable load_model_table(const std::string& models_dir, const std::string& model,
                            const std::string& variant) {
  const std::string chosen = variant.empty() ? default_variant(model) : variant;
  auto variants = model_variants(models_dir, model);
  if (variants.empty()) {
    std::vector<std::string> models;
    for (auto [name, ignored] : kDefaults) models.emplace_back(name);
    fail("unknown model '" + model + "': no tables for it in '" + models_dir +
         "' (valid: " + join(models) + ")");
  }
  if (std::find(variants.begin(), variants.end(), chosen) == variants.end()) {
    fail("unknown variant '" + chosen + "' for model '" + model + "' (valid: " + join(variants) +
         ")");
  }
  const std::string path = models_dir + "/" + model + "_" + chosen + ".csv";
  std::ifstream in(path);
  if (!in) fail("cannot open model table '" + path + "'");
  ModelTable table = parse_model_table(in, path);
  if ((!table.model.empty() && table.model != model) ||
      (!table.variant.empty() && table.variant != chosen)) {
    fail(path + ": header says model '" + table.model + "' variant '" + table.variant +
         "', expected '" + model + "' '" + chosen + "'");
  }
  table.model = model;
  table.variant = chosen;
  return table;
}

}  // namespace coll::study
