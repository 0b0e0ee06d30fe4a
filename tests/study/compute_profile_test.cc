// Compute profiles: FLOPs to seconds, the P40 preset on the shipped model tables, scaling, and the
// CSV forms with their error messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "coll/error.hpp"
#include "study/compute_profile.hpp"
#include "study/model_table.hpp"

namespace coll::study {
namespace {

const std::vector<TensorFlops> kTiny{{"fc8", 8e6}, {"fc8", 0}, {"conv1", 2e8}, {"conv1", 0}};
const std::vector<std::string> kTinyLayers{"fc8", "fc8", "conv1", "conv1"};

std::string error_of(const std::string& csv, const std::vector<std::string>& layers = kTinyLayers) {
  std::istringstream in(csv);
  try {
    parse_profile_csv(in, "prof.csv", layers);
  } catch (const Error& error) {
    EXPECT_EQ(error.status(), Status::InvalidArgument);
    return error.what();
  }
  ADD_FAILURE() << "accepted:\n" << csv;
  return {};
}

ComputeProfile parse(const std::string& csv) {
  std::istringstream in(csv);
  return parse_profile_csv(in, "prof.csv", kTinyLayers);
}

TEST(ComputeProfile, FlopsToSecondsOnTheLayersFirstTensor) {
  // backward = 2 x forward x batch / rate: fc8 2 x 8e6 x 10 / 1e12 = 1.6e-4 s, conv1 4e-3 s.
  const ComputeProfile profile = flops_profile(kTiny, 10, 1e12, "tiny");
  ASSERT_EQ(profile.backward_s.size(), 4u);
  EXPECT_DOUBLE_EQ(profile.backward_s[0], 1.6e-4);
  EXPECT_EQ(profile.backward_s[1], 0.0);
  EXPECT_DOUBLE_EQ(profile.backward_s[2], 4e-3);
  EXPECT_EQ(profile.backward_s[3], 0.0);
  EXPECT_DOUBLE_EQ(profile.total_s(), 4.16e-3);
  const auto ready = profile.ready_s();
  EXPECT_DOUBLE_EQ(ready[1], 1.6e-4);
  EXPECT_DOUBLE_EQ(ready[3], 4.16e-3);
  EXPECT_EQ(profile.source, "tiny");
}

TEST(ComputeProfile, FlopsOnALaterRowStillGoToTheLayersFirstTensor) {
  const ComputeProfile profile = flops_profile({{"bn", 0}, {"bn", 1e9}, {"fc", 1e9}}, 1, 1e9, "x");
  EXPECT_EQ(profile.backward_s, (std::vector<double>{2.0, 0.0, 2.0}));
}

TEST(ComputeProfile, RejectsBadInputs) {
  EXPECT_THROW(flops_profile(kTiny, 0, 1e12, "x"), Error);
  EXPECT_THROW(flops_profile(kTiny, 1, 0, "x"), Error);
  EXPECT_THROW(flops_profile({{"a", -1}}, 1, 1e12, "x"), Error);
  EXPECT_THROW(p40_batch_size("vgg16"), Error);
  EXPECT_THROW(scale_profile(flops_profile(kTiny, 1, 1e12, "x"), 0), Error);
  EXPECT_THROW(scale_profile(flops_profile(kTiny, 1, 1e12, "x"), -2), Error);
}

TEST(ComputeProfile, P40PresetUsesThePapersBatchesAndSustainedRate) {
  EXPECT_EQ(p40_batch_size("alexnet"), 1024);
  EXPECT_EQ(p40_batch_size("googlenet"), 128);
  EXPECT_EQ(p40_batch_size("resnet50"), 32);
  const ComputeProfile profile = p40_preset("alexnet", kTiny);
  EXPECT_DOUBLE_EQ(profile.backward_s[2], 2 * 2e8 * 1024 / (11.76e12 * 0.5));
  EXPECT_NE(profile.source.find("p40"), std::string::npos);
  EXPECT_DOUBLE_EQ(p40_profile(kTiny, 1, 1.0).backward_s[0], 2 * 8e6 / 1e12);
}

TEST(ComputeProfile, P40PresetOnTheShippedTables) {
  // AlexNet (BVLC) is 1.4488 forward GFLOPs per sample: 2 x 1.4488e9 x 1024 / 5.88e12 = 0.505 s.
  const std::vector<std::pair<std::string, double>> expected{
      {"alexnet", 0.505}, {"googlenet", -1}, {"resnet50", -1}};
  for (const auto& [model, seconds] : expected) {
    const ModelTable table =
        coll::study::load_model_table(COLL_SOURCE_DIR "/bench/models", model, "");
    std::vector<TensorFlops> tensors;
    double forward = 0;
    for (const auto& tensor : table.tensors) {
      tensors.push_back({tensor.layer, tensor.forward_flops});
      forward += tensor.forward_flops;
    }
    const ComputeProfile profile = p40_preset(model, tensors);
    const double total = profile.total_s();
    EXPECT_NEAR(total, 2 * forward * p40_batch_size(model) / 5.88e12, 1e-9 * total);
    if (seconds > 0) {
      EXPECT_NEAR(total, seconds, 0.001);
    }
    EXPECT_GT(total, 0.01);
    EXPECT_LT(total, 2.0);
    std::printf("p40 %s (%s, %zu tensors): forward %.4f GFLOP/sample, batch %d, backward %.1f ms\n",
                model.c_str(), table.variant.c_str(), tensors.size(), forward / 1e9,
                p40_batch_size(model), total * 1e3);
  }
}

TEST(ComputeProfile, ScaleMultipliesEveryTime) {
  const ComputeProfile base = flops_profile(kTiny, 10, 1e12, "tiny");
  const ComputeProfile doubled = scale_profile(base, 2.0);
  for (std::size_t i = 0; i < base.backward_s.size(); ++i) {
    EXPECT_DOUBLE_EQ(doubled.backward_s[i], 2 * base.backward_s[i]);
  }
  EXPECT_NE(doubled.source.find("x2"), std::string::npos);
}

TEST(ComputeProfile, CsvPerTensor) {
  const ComputeProfile profile =
      parse("# measured on host x\n\nindex,backward_ms\n0,1.5\n1,0\n2, 4\n3,0.25\n");
  EXPECT_EQ(profile.backward_s, (std::vector<double>{1.5e-3, 0, 4e-3, 0.25e-3}));
  EXPECT_NE(profile.source.find("prof.csv"), std::string::npos);
}

TEST(ComputeProfile, CsvPerLayerGoesToTheFirstTensor) {
  const ComputeProfile profile = parse("layer,backward_ms\nfc8,2\nconv1,3\n");
  EXPECT_EQ(profile.backward_s, (std::vector<double>{2e-3, 0, 3e-3, 0}));
}

TEST(ComputeProfile, CsvErrorsNameTheLine) {
  EXPECT_NE(error_of("").find("no header"), std::string::npos);
  EXPECT_NE(error_of("idx,ms\n").find("prof.csv:1: header"), std::string::npos);
  EXPECT_NE(error_of("index,backward_ms\n0,1\n2,1\n").find("prof.csv:3: expected index 1"),
            std::string::npos);
  EXPECT_NE(error_of("index,backward_ms\n0,-1\n").find("prof.csv:2: backward_ms"),
            std::string::npos);
  EXPECT_NE(error_of("index,backward_ms\n0,abc\n").find("prof.csv:2:"), std::string::npos);
  EXPECT_NE(error_of("index,backward_ms\n0,1ms\n").find("prof.csv:2:"), std::string::npos);
  EXPECT_NE(error_of("index,backward_ms\n0,1,2\n").find("prof.csv:2: expected two"),
            std::string::npos);
  EXPECT_NE(error_of("index,backward_ms\n0,1\n1,1\n").find("2 rows, but the model has 4 tensors"),
            std::string::npos);
  EXPECT_NE(error_of("index,backward_ms\n0,1\n1,1\n2,1\n3,1\n4,1\n").find("prof.csv:6: more rows"),
            std::string::npos);
  EXPECT_NE(
      error_of("layer,backward_ms\nconv1,1\nfc8,1\n").find("prof.csv:2: expected layer 'fc8'"),
      std::string::npos);
  EXPECT_NE(error_of("layer,backward_ms\nfc8,1\n").find("1 rows, but the model has 2 layers"),
            std::string::npos);
}

TEST(ComputeProfile, LoadsFilesAndReportsMissingOnes) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("compute_profile_test_" + std::to_string(getpid()) + ".csv");
  {
    std::ofstream out(path);
    out << "index,backward_ms\n0,1\n1,2\n";
  }
  EXPECT_EQ(load_profile_csv(path, 2).backward_s, (std::vector<double>{1e-3, 2e-3}));
  try {
    load_profile_csv(path, 3);
    ADD_FAILURE() << "accepted a profile of the wrong length";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos);
  }
  {
    std::ofstream out(path);
    out << "layer,backward_ms\nfc8,1\n";
  }
  EXPECT_THROW(load_profile_csv(path, 2), Error);  // per-layer needs the layer names
  EXPECT_EQ(load_profile_csv(path, std::vector<std::string>{"fc8", "fc8"}).backward_s,
            (std::vector<double>{1e-3, 0}));
  std::filesystem::remove(path);
  EXPECT_THROW(load_profile_csv(path, 2), Error);
}

}  // namespace
}  // namespace coll::study
