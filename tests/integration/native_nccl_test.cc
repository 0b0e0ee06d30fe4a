// native_nccl runs where a GPU exists and is refused clearly where none does (as here).
#include <gtest/gtest.h>

#include "run_command.hpp"

namespace {

using coll::testing::run_command;

TEST(NativeNccl, RunsBitExactWithAGpuOrIsRefusedClearlyWithout) {
  const auto result = run_command(std::string(COLLBENCH_PATH) +
                                      " --ranks-per-node 2 --algo native_nccl -b 4 -e 1M -f 16 "
                                      "-n 2 -w 1 -d float",
                                  120);
  if (result.exit_code == 2) {  // no GPU or built without NCCL: the refusal must say so
    EXPECT_NE(result.output.find("'native_nccl' is not available in this process"),
              std::string::npos)
        << result.output;
    std::printf("native_nccl not runnable here (no GPU): checked the refusal only\n");
  } else {
    EXPECT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find("Out of bounds values : 0 OK"), std::string::npos)
        << result.output;
  }
}

}  // namespace
