// The cost presets against the measurements they were fitted to (scripts/fit_cost_presets.py):
// the paper's group's all-reduce fits T = a + b*M (constants of their later public MG-WFBP
// code, not of the paper; assumed to describe a cluster of the P40 testbed's class), 2 and 4
// workers assumed inside one node, 8 and 16 on 2 and 4 nodes of 4. Issue 8 requires the flat
// ring within 10 % of the 16-worker fit and within 15 % of the others at 4, 25 and 100 MiB.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "coll/error.hpp"
#include "coll/model/preset.hpp"
#include "coll/selector.hpp"

namespace coll::model {
namespace {

struct Fit {
  int workers, nodes;
  double a, b;  // seconds, seconds per byte
  double tolerance;
};

constexpr Fit kInfiniBand[] = {{2, 1, 2.554691e-06, 9.837548e-11, 0.15},
                               {4, 1, 4.204299e-05, 2.058936e-10, 0.15},
                               {8, 2, 9.753672e-05, 3.056823e-10, 0.15},
                               {16, 4, 2.358368e-04, 4.059479e-10, 0.10}};
constexpr Fit kEthernet[] = {{8, 2, 5.230273e-04, 8.570747e-10, 0.15},
                             {16, 4, 9.080981e-04, 7.395651e-10, 0.10}};
constexpr double kMiB = 1 << 20;

void expect_ring_matches(const char* preset, const Fit* begin, const Fit* end) {
  const CostParams params = *find_preset(preset);
  for (const Fit* fit = begin; fit != end; ++fit) {
    const Shape shape = Shape::uniform(fit->nodes, fit->workers / fit->nodes);
    for (double mib : {4.0, 25.0, 100.0}) {
      const double bytes = mib * kMiB;
      const double measured = fit->a + fit->b * bytes;
      const double modelled = predict("ring", params, shape, std::size_t(bytes))->total_s();
      EXPECT_NEAR(modelled / measured, 1.0, fit->tolerance)
          << preset << ": " << fit->workers << " workers, " << mib << " MiB: model "
          << modelled * 1e3 << " ms, fit " << measured * 1e3 << " ms";
    }
  }
}

TEST(CostPresetFit, P40Ib56RingMatchesTheGroupsInfiniBandFits) {
  expect_ring_matches("p40-ib56", std::begin(kInfiniBand), std::end(kInfiniBand));
}

TEST(CostPresetFit, Ethernet10gRingMatchesTheGroupsTenGigabitFits) {
  expect_ring_matches("ethernet-10g", std::begin(kEthernet), std::end(kEthernet));
  // Inside one node it is the same machine as p40-ib56.
  expect_ring_matches("ethernet-10g", std::begin(kInfiniBand), std::begin(kInfiniBand) + 2);
}

TEST(CostPresetFit, HostStagingMakesFourCopiesShareTheNode) {
  // Without the shared staging path a ring's slope grows 1.5x from 2 to 4 ranks; the group's
  // fits give 2.1x. The preset must reproduce the fitted ratio, not the ideal one.
  CostParams params = *find_preset("p40-ib56");
  const std::size_t bytes = 100u << 20;
  auto ratio = [&] {
    return predict("ring", params, Shape::uniform(1, 4), bytes)->bandwidth_s /
           predict("ring", params, Shape::uniform(1, 2), bytes)->bandwidth_s;
  };
  EXPECT_NEAR(ratio(), 2.058936 / 0.9837548, 0.1);
  params.staging_beta_s_per_byte = 0;
  EXPECT_DOUBLE_EQ(ratio(), 1.5);
}

TEST(CostPresetFit, AliasesAndNames) {
  EXPECT_EQ(find_preset("p40-cluster")->inter.beta_s_per_byte,
            find_preset("p40-ib56")->inter.beta_s_per_byte);
  for (const char* name : {"this-vm", "p40-ib56", "p40-cluster", "ethernet-10g", "dgx1-ib100"}) {
    EXPECT_TRUE(find_preset(name)) << name;
  }
  EXPECT_FALSE(find_preset("nosuch"));
  // DMA engines move the testbeds' bytes while the ranks work; this machine's cores copy them.
  for (const char* name : {"p40-ib56", "ethernet-10g", "dgx1-ib100"}) {
    EXPECT_TRUE(find_preset(name)->charging.alpha_overlaps_bytes) << name;
  }
  EXPECT_FALSE(find_preset("this-vm")->charging.alpha_overlaps_bytes);
  EXPECT_THROW(preset_or_throw("nosuch", "test"), Error);
}

class PresetFile : public ::testing::Test {
 protected:
  std::string path = ::testing::TempDir() + "/preset_" + std::to_string(::getpid()) + ".txt";
  void TearDown() override { std::filesystem::remove(path); }
  std::string error_of(const std::string& text) {
    std::ofstream(path) << text;
    try {
      preset_or_throw(path, "--cost-preset");
    } catch (const Error& error) {
      return error.what();
    }
    return "no error";
  }
};

TEST_F(PresetFile, LoadsEveryKey) {
  std::ofstream(path) << "# my cluster\nname = lab\nintra.alpha_s = 2e-6\n"
                         "intra.beta_s_per_byte = 1e-10\ninter.alpha_s = 5e-6\n"
                         "inter.beta_s_per_byte = 2e-10\ngamma_s_per_byte = 1e-11\n"
                         "staging_beta_s_per_byte = 3e-11\nalpha_overlaps_bytes = 1\n";
  const CostParams params = preset_or_throw(path, "--cost-preset");
  EXPECT_TRUE(params.charging.alpha_overlaps_bytes);
  EXPECT_DOUBLE_EQ(params.intra.alpha_s, 2e-6);
  EXPECT_DOUBLE_EQ(params.inter.beta_s_per_byte, 2e-10);
  EXPECT_DOUBLE_EQ(params.staging_beta_s_per_byte, 3e-11);
  EXPECT_NE(params.source.find("(lab)"), std::string::npos) << params.source;
}

TEST_F(PresetFile, BadFilesAreNamedWithTheirProblem) {
  EXPECT_NE(error_of("intra.alpha_s = 1\n").find("missing 'intra.beta_s_per_byte'"),
            std::string::npos);
  EXPECT_NE(error_of("bogus = 1\n").find("line 1: unknown key 'bogus'"), std::string::npos);
  EXPECT_NE(error_of("intra.alpha_s = -1\n").find("not a positive number"), std::string::npos);
  EXPECT_NE(error_of("intra.alpha_s = 1\nintra.beta_s_per_byte = 1\ninter.alpha_s = 1\n"
                     "inter.beta_s_per_byte = 1\ngamma_s_per_byte = 1\n"
                     "staging_beta_s_per_byte = -1\n")
                .find("'staging_beta_s_per_byte' is '-1', not a number >= 0"),
            std::string::npos);
  EXPECT_NE(error_of("intra.alpha_s = 1\nintra.beta_s_per_byte = 1\ninter.alpha_s = 1\n"
                     "inter.beta_s_per_byte = 1\ngamma_s_per_byte = 1\n"
                     "alpha_overlaps_bytes = yes\n")
                .find("'alpha_overlaps_bytes' is 'yes', not 0 or 1"),
            std::string::npos);
  EXPECT_THROW(preset_or_throw("/nonexistent/preset.txt", "x"), Error);
}

}  // namespace
}  // namespace coll::model
