// Tests of the model tables in bench/models and of their loader.
#include "study/model_table.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "coll/error.hpp"

namespace coll::study {
namespace {

namespace fs = std::filesystem;

// Counts from /work/shared/reference/paper.md. GMACs per image (forward, 1 MAC = 2 FLOPs) are the
// published figures:
//   AlexNet BVLC 0.724 (227^2, grouped): Sze et al., "Efficient Processing of Deep Neural
//     Networks", Proc. IEEE 2017, Table (AlexNet: 724M MACs).
//   AlexNet torchvision 0.71 and GoogLeNet torchvision 1.50, ResNet-50 torchvision 4.09: the
//     "GFLOPS" column of torchvision's weight tables (which counts multiply-adds).
//   AlexNet MXNet 1.135: no published figure; it is the BVLC 0.724 plus conv2, conv4 and conv5
//     counted again without groups (0.224 + 0.112 + 0.075), a check of group handling.
//   GoogLeNet BVLC 1.5: Szegedy et al. 2015, "1.5 billion multiply-adds"; the BVLC definition
//     has real 5x5 convolutions (1.58 GMACs by our count), hence 6% tolerance.
//   ResNet-50 Caffe 3.8: He et al. 2016, Table 1, "3.8 x 10^9 FLOPs" (multiply-adds; stride 2 on
//     the first 1x1 of each stage).
//   AlexNet tf_cnn_benchmarks 0.839: no published figure; by layer (MMACs) conv1 55^2*64*363 =
//     70.3, conv2 27^2*192*1600 = 224.0, conv3 13^2*384*1728 = 112.1, conv4 13^2*384*3456 =
//     224.3, conv5 13^2*256*3456 = 149.5, fc 37.7 + 16.8 + 4.1: a check of the conv widths.
//   GoogLeNet tf_cnn_benchmarks and MXNet: BVLC's definition without heads (1.5, as above);
//     torchvision with aux heads: 1.50 plus two 4x4 heads (about 0.01).
//   ResNet-50 tf_cnn_benchmarks v1 and Caffe with every blob: He's 3.8; MXNet's symbol has its
//     stride on the 3x3 conv, as torchvision's v1.5 (4.09).
// Computed totals include 2 FLOPs per output element of affine normalisation layers (<0.3%).
struct Expected {
  const char* model;
  const char* variant;
  std::size_t tensors;
  std::size_t elements;
  const char* classifier;  // layer of the first row
  const char* first_conv;  // layer of the last row
  double gmacs;
  double tolerance;  // relative
};

const Expected kExpected[] = {
    {"alexnet", "bvlc_caffe", 16, 60965224, "fc8", "conv1", 0.724, 0.01},
    {"alexnet", "torchvision", 16, 61100840, "classifier.6", "features.0", 0.71, 0.02},
    {"alexnet", "mxnet", 16, 62378344, "fullyconnected2", "convolution0", 1.135, 0.01},
    {"googlenet", "bvlc_caffe", 128, 13378280, "loss3/classifier", "conv1/7x7_s2", 1.5, 0.07},
    {"googlenet", "bvlc_caffe_noaux", 116, 6998552, "loss3/classifier", "conv1/7x7_s2", 1.5, 0.06},
    {"googlenet", "torchvision", 173, 6624904, "fc", "conv1.conv", 1.50, 0.02},
    {"resnet50", "caffe_he", 162, 25557096, "fc1000", "conv1", 3.8, 0.03},
    {"resnet50", "torchvision", 161, 25557032, "fc", "conv1", 4.09, 0.02},
    // Tables derived from each framework's own definition (counts derived in generate.py).
    {"alexnet", "tf_cnn_benchmarks", 16, 61842345, "affine2", "conv0", 0.839, 0.01},
    {"googlenet", "tf_cnn_benchmarks", 116, 6999577, "affine0", "conv0", 1.5, 0.06},
    {"googlenet", "mxnet", 116, 6998552, "fullyconnected0", "conv_conv1", 1.5, 0.06},
    {"googlenet", "torchvision_aux", 187, 13004888, "fc", "conv1.conv", 1.51, 0.02},
    {"resnet50", "caffe_he_all_blobs", 321, 25610269, "fc1000", "conv1", 3.8, 0.03},
    {"resnet50", "tf_cnn_benchmarks", 161, 25559081, "affine0", "conv0", 3.8, 0.03},
    {"resnet50", "mxnet", 157, 25549486, "fc1", "bn_data", 4.09, 0.02},
};

std::string name_of(const testing::TestParamInfo<Expected>& info) {
  return std::string(info.param.model) + "_" + info.param.variant;
}

void PrintTo(const Expected& e, std::ostream* os) {
  *os << e.model << " " << e.variant;
}

class ModelTableTest : public testing::TestWithParam<Expected> {};

TEST_P(ModelTableTest, MatchesPaperTotals) {
  const Expected& e = GetParam();
  ModelTable table = load_model_table(COLL_MODELS_DIR, e.model, e.variant);
  EXPECT_EQ(table.model, e.model);
  EXPECT_EQ(table.variant, e.variant);
  EXPECT_FALSE(table.source.empty());
  EXPECT_EQ(table.tensors.size(), e.tensors);
  EXPECT_EQ(table.total_elements(), e.elements);
}

TEST_P(ModelTableTest, ShapesMatchElements) {
  for (const auto& t :
       load_model_table(COLL_MODELS_DIR, GetParam().model, GetParam().variant).tensors) {
    std::size_t product = 1;
    for (auto d : t.shape) product *= static_cast<std::size_t>(d);
    EXPECT_EQ(product, t.elements) << t.layer << " " << t.name;
  }
}

TEST_P(ModelTableTest, BackwardOrderRunsFromClassifierToFirstConv) {
  const Expected& e = GetParam();
  auto tensors = load_model_table(COLL_MODELS_DIR, e.model, e.variant).tensors;
  EXPECT_EQ(tensors.front().layer, e.classifier);
  EXPECT_EQ(tensors.back().layer, e.first_conv);
  for (const auto& t : tensors) {
    if (t.layer == e.first_conv && t.name == "weight") {
      ASSERT_EQ(t.shape.size(), 4u);
      EXPECT_EQ(t.shape[1], 3) << "the first convolution reads the 3 image channels";
    }
  }
  // Each layer's tensors are contiguous: a layer never reappears after another one.
  std::set<std::string> finished;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(finished.count(tensors[i].layer), 0u) << tensors[i].layer << " is split";
    if (i + 1 < tensors.size() && tensors[i + 1].layer != tensors[i].layer) {
      finished.insert(tensors[i].layer);
    }
  }
}

TEST_P(ModelTableTest, FlopsOnWeightRowsNearPublishedFigure) {
  const Expected& e = GetParam();
  double flops = 0;
  const auto tensors = load_model_table(COLL_MODELS_DIR, e.model, e.variant).tensors;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& t = tensors[i];
    const bool first_of_layer = i == 0 || tensors[i - 1].layer != t.layer;
    // A layer's FLOPs sit on its first row in declaration order (weight, gamma, scale); only
    // Caffe's BatchNorm statistics own none (their work is counted on the Scale layer).
    const bool declared_first = t.name == "weight" || t.name == "gamma" || t.name == "scale";
    if (declared_first) {
      EXPECT_GT(t.forward_flops, 0) << t.layer << " " << t.name;
    } else {
      EXPECT_EQ(t.forward_flops, 0) << t.layer << " " << t.name;
    }
    if (t.forward_flops > 0 && !first_of_layer) {
      EXPECT_EQ(tensors[i - 1].forward_flops, 0) << t.layer << ": two rows carry FLOPs";
    }
    flops += t.forward_flops;
  }
  EXPECT_NEAR(flops / 2e9, e.gmacs, e.gmacs * e.tolerance);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, ModelTableTest, testing::ValuesIn(kExpected), name_of);

std::size_t position(const ModelTable& table, const std::string& layer) {
  auto it = std::find_if(table.tensors.begin(), table.tensors.end(),
                         [&](const GradientTensor& t) { return t.layer == layer; });
  EXPECT_NE(it, table.tensors.end()) << layer;
  return static_cast<std::size_t>(it - table.tensors.begin());
}

TEST(ModelTable, GoogLeNetAuxiliaryHeadsSitWhereCaffeBackwardReachesThem) {
  ModelTable t = load_model_table(COLL_MODELS_DIR, "googlenet", "");
  EXPECT_EQ(t.variant, "bvlc_caffe");
  EXPECT_EQ(4 * t.total_elements(), 53513120u);
  // loss2 is defined after inception_4d, loss1 after inception_4a: backward meets each head
  // right after the inception block that follows its branch point.
  EXPECT_LT(position(t, "inception_4e/1x1"), position(t, "loss2/classifier"));
  EXPECT_LT(position(t, "loss2/conv"), position(t, "inception_4d/pool_proj"));
  EXPECT_LT(position(t, "inception_4b/1x1"), position(t, "loss1/classifier"));
  EXPECT_LT(position(t, "loss1/conv"), position(t, "inception_4a/pool_proj"));
}

TEST(ModelTable, TorchvisionAuxiliaryHeadsSitWhereAutogradReachesThem) {
  ModelTable t = load_model_table(COLL_MODELS_DIR, "googlenet", "torchvision_aux");
  EXPECT_LT(position(t, "inception4e.branch1.conv"), position(t, "aux2.fc2"));
  EXPECT_LT(position(t, "aux2.conv.conv"), position(t, "inception4d.branch4.1.bn"));
  EXPECT_LT(position(t, "inception4b.branch1.conv"), position(t, "aux1.fc2"));
  EXPECT_LT(position(t, "aux1.conv.conv"), position(t, "inception4a.branch4.1.bn"));
}

TEST(ModelTable, CaffeAllBlobsAddsEachBatchNormsStatisticsAfterItsScale) {
  ModelTable t = load_model_table(COLL_MODELS_DIR, "resnet50", "caffe_he_all_blobs");
  const std::size_t scale = position(t, "scale5c_branch2c");
  ASSERT_LT(scale + 5, t.tensors.size());
  EXPECT_EQ(t.tensors[scale + 2].layer, "bn5c_branch2c");
  EXPECT_EQ(t.tensors[scale + 2].name, "mean");
  EXPECT_EQ(t.tensors[scale + 3].name, "variance");
  EXPECT_EQ(t.tensors[scale + 4].elements, 1u);  // the moving-average factor
  EXPECT_EQ(t.tensors[scale + 5].layer, "res5c_branch2c");
}

TEST(ModelTable, DefaultsAndVariantLists) {
  EXPECT_EQ(default_variant("alexnet"), "bvlc_caffe");
  EXPECT_EQ(default_variant("googlenet"), "bvlc_caffe");
  EXPECT_EQ(default_variant("resnet50"), "caffe_he");
  using V = std::vector<std::string>;
  EXPECT_EQ(model_variants(COLL_MODELS_DIR, "alexnet"),
            (V{"bvlc_caffe", "mxnet", "tf_cnn_benchmarks", "torchvision"}));
  EXPECT_EQ(model_variants(COLL_MODELS_DIR, "googlenet"),
            (V{"bvlc_caffe", "bvlc_caffe_noaux", "mxnet", "tf_cnn_benchmarks", "torchvision",
               "torchvision_aux"}));
  EXPECT_EQ(model_variants(COLL_MODELS_DIR, "resnet50"),
            (V{"caffe_he", "caffe_he_all_blobs", "mxnet", "tf_cnn_benchmarks", "torchvision"}));
  EXPECT_TRUE(model_variants(COLL_MODELS_DIR, "vgg16").empty());
}

// The message of the coll::Error that `f` throws, after checking its status.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const coll::Error& e) {
    EXPECT_EQ(e.status(), coll::Status::InvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no coll::Error thrown";
  return "";
}

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "message: " << (text)

TEST(ModelTable, UnknownNamesListTheValidOnes) {
  std::string m = error_of([] { load_model_table(COLL_MODELS_DIR, "vgg16", ""); });
  EXPECT_CONTAINS(m, "unknown model 'vgg16'");
  EXPECT_CONTAINS(m, "alexnet, googlenet, resnet50");
  m = error_of([] { load_model_table(COLL_MODELS_DIR, "vgg16", "caffe"); });
  EXPECT_CONTAINS(m, "unknown model 'vgg16'");
  m = error_of([] { load_model_table(COLL_MODELS_DIR, "googlenet", "tensorflow"); });
  EXPECT_CONTAINS(m, "unknown variant 'tensorflow'");
  EXPECT_CONTAINS(m, "bvlc_caffe, bvlc_caffe_noaux, mxnet, tf_cnn_benchmarks, torchvision");
  m = error_of([] { default_variant("lenet"); });
  EXPECT_CONTAINS(m, "unknown model 'lenet'");
  m = error_of([] { load_model_table("/nonexistent/models", "alexnet", ""); });
  EXPECT_CONTAINS(m, "/nonexistent/models");
}

std::string parse_error(const std::string& text) {
  return error_of([&] {
    std::istringstream in(text);
    parse_model_table(in, "t.csv");
  });
}

const std::string kHeader = "# source: test\nindex,layer,tensor,shape,elements,forward_flops\n";

TEST(ModelTable, ParsesAWellFormedTable) {
  std::istringstream in("# model: m\r\n# variant: v\n# totals: tensors=2 elements=7\n\n" +
                        kHeader.substr(kHeader.find('\n') + 1) +
                        "0,fc,weight,3x2,6,12\n1,fc,bias,1,1,0\n");
  ModelTable t = parse_model_table(in, "t.csv");
  EXPECT_EQ(t.model, "m");
  EXPECT_EQ(t.variant, "v");
  ASSERT_EQ(t.tensors.size(), 2u);
  EXPECT_EQ(t.tensors[0].shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(t.tensors[0].forward_flops, 12);
  EXPECT_EQ(t.total_elements(), 7u);
  EXPECT_EQ(t.flat_offsets(), (std::vector<std::size_t>{0, 6}));
}

TEST(ModelTable, MalformedTablesNameTheLine) {
  EXPECT_CONTAINS(parse_error("0,fc,weight,3x2,6,12\n"), "t.csv:1: expected the header line");
  EXPECT_CONTAINS(parse_error(kHeader + "0,fc,weight,3x2,6\n"), "t.csv:3: expected 6");
  EXPECT_CONTAINS(parse_error(kHeader + "0,fc,weight,3x2,6,0\n2,fc,bias,2,2,0\n"),
                  "t.csv:4: index '2', expected 1");
  EXPECT_CONTAINS(parse_error(kHeader + "0,fc,weight,3x2,7,0\n"),
                  "t.csv:3: elements 7 != product of shape 3x2 = 6");
  EXPECT_CONTAINS(parse_error(kHeader + "0,fc,weight,3x0,0,0\n"), "t.csv:3: bad shape");
  EXPECT_CONTAINS(parse_error(kHeader + "0,fc,weight,3xa,3,0\n"), "t.csv:3: bad shape");
  EXPECT_CONTAINS(parse_error(kHeader + "0,fc,weight,3,three,0\n"), "t.csv:3: bad element");
  EXPECT_CONTAINS(parse_error(kHeader + "0,fc,weight,3,3,-1\n"), "t.csv:3: bad forward_flops");
  EXPECT_CONTAINS(parse_error(kHeader + "0,,weight,3,3,0\n"), "t.csv:3: empty layer");
  EXPECT_CONTAINS(parse_error(kHeader), "t.csv: no tensor rows");
  EXPECT_CONTAINS(parse_error("# totals: tensors=2 elements=3\n" + kHeader + "0,fc,b,3,3,0\n"),
                  "header declares tensors=2 but the rows hold 1");
}

// A scratch models directory, removed at the end of the test.
class ScratchDir {
 public:
  ScratchDir()
      : path_(fs::path(testing::TempDir()) /
              ("model_table_test_" + std::to_string(getpid()) + "_" +
               testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  void write(const std::string& file, const std::string& text) const {
    std::ofstream(path_ / file) << text;
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

TEST(ModelTable, LoadReportsFileLineAndHeaderMismatch) {
  ScratchDir dir;
  dir.write("alexnet_broken.csv", kHeader + "0,fc,weight,3x2,7,0\n");
  dir.write("alexnet_renamed.csv", "# model: resnet50\n" + kHeader + "0,fc,weight,3,3,0\n");
  std::string m = error_of([&] { load_model_table(dir.path(), "alexnet", "broken"); });
  EXPECT_CONTAINS(m, dir.path() + "/alexnet_broken.csv:3: elements 7");
  m = error_of([&] { load_model_table(dir.path(), "alexnet", "renamed"); });
  EXPECT_CONTAINS(m, "header says model 'resnet50'");
  m = error_of([&] { load_model_table(dir.path(), "alexnet", ""); });
  EXPECT_CONTAINS(m, "unknown variant 'bvlc_caffe'");
  EXPECT_CONTAINS(m, "(valid: broken, renamed)");
}

}  // namespace
}  // namespace coll::study
