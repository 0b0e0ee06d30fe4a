// native_nccl runs where a GPU exists and is refused clearly where none does (as here); there
// the test checks the refusal and reports itself skipped.
#include <gtest/gtest.h>

#include "read_json.hpp"
#include "run_command.hpp"
#include "scratch_file.hpp"

namespace {

using coll::testing::read_json;
using coll::testing::run_command;
using coll::testing::ScratchFile;

TEST(NativeNccl, RunsBitExactWithAGpuOrIsRefusedClearlyWithout) {
  const ScratchFile json("native_nccl.json");
  const auto result = run_command(std::string(COLLBENCH_PATH) +
                                      " --ranks-per-node 2 --algo native_nccl -b 4 -e 1M -f 16 "
                                      "-n 2 -w 1 -d float --json " +
                                      json.path(),
                                  120);
  if (result.exit_code == 2) {  // no GPU or built without NCCL: the refusal must say so
    EXPECT_NE(result.output.find("'native_nccl' is not available in this process"),
              std::string::npos)
        << result.output;
    GTEST_SKIP() << "native_nccl not runnable here (no GPU or no NCCL): checked its refusal only";
  } else {
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const auto report = read_json(json.path());
    EXPECT_EQ(report.at("wrong_total"), 0);
    // -b 4 -e 1M -f 16: 4, 64, 1K, 16K and 256K bytes, all run by native_nccl.
    ASSERT_EQ(report.at("results").size(), 5u);
    for (const auto& row : report.at("results")) {
      EXPECT_EQ(row.at("algorithm"), "native_nccl") << row;
      EXPECT_EQ(row.at("out_of_place").at("wrong"), 0) << row;
      EXPECT_EQ(row.at("in_place").at("wrong"), 0) << row;
    }
  }
}

}  // namespace
