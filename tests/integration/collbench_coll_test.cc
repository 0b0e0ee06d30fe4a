// collbench --coll: every collective swept with verification, nccl-tests' sizes and bus
// factors, and a verification that notices a wrong result.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "run_command.hpp"
#include "sweep_collective.hpp"

namespace {

using coll::testing::run_command;

std::string slurp(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(CollbenchColl, EverySweptCollectiveIsVerifiedWithItsBusFactor) {
  // 3 ranks: all-gather and reduce-scatter scale by (n-1)/n = 0.666..., the rest as nccl-tests.
  const std::vector<std::pair<std::string, std::string>> expected = {{"allreduce", "1.333"},
                                                                     {"broadcast", "1"},
                                                                     {"reduce", "1"},
                                                                     {"allgather", "0.666"},
                                                                     {"reducescatter", "0.666"}};
  for (const auto& [name, factor] : expected) {
    for (const char* type : {"float", "bfloat16", "int8"}) {
      const std::string json = ::testing::TempDir() + "/coll_" + name + ".json";
      const auto result =
          run_command(std::string(COLLBENCH_PATH) + " --coll " + name + " -d " + type +
                          " -o max -g 3 -b 0 -e 1M -f 64 -n 2 -w 1 --json " + json,
                      120);
      ASSERT_EQ(result.exit_code, 0) << name << " " << type << ": " << result.output;
      EXPECT_NE(result.output.find("# collbench " + name + " sweep"), std::string::npos)
          << result.output;
      EXPECT_NE(result.output.find("Out of bounds values : 0 OK"), std::string::npos);
      const std::string text = slurp(json);
      EXPECT_NE(text.find("\"collective\":\"" + name + "\""), std::string::npos) << text;
      EXPECT_NE(text.find("\"bus_factor\":" + factor), std::string::npos) << text;
      EXPECT_NE(text.find("\"wrong_total\":0"), std::string::npos) << text;
    }
  }
}

TEST(CollbenchColl, BlockCollectivesSweepTheWholeVectorAsNcclTestsDo) {
  // 64 B of float over 3 ranks: 5 elements per rank, a vector of 15 (60 B).
  const auto result =
      run_command(std::string(COLLBENCH_PATH) + " --coll allgather -g 3 -b 64 -e 64 -n 1 -w 0", 60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("          60           15  float32"), std::string::npos)
      << result.output;
}

TEST(CollbenchColl, UnknownCollectiveOrAlgorithmForOneIsAUsageError) {
  const auto unknown = run_command(std::string(COLLBENCH_PATH) + " --coll gather", 30);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown collective 'gather'; known: allreduce, broadcast"),
            std::string::npos)
      << unknown.output;
  const auto algo = run_command(std::string(COLLBENCH_PATH) + " --coll broadcast --algo ring", 30);
  EXPECT_EQ(algo.exit_code, 2) << algo.output;
  EXPECT_NE(algo.output.find("--coll broadcast"), std::string::npos) << algo.output;
}

TEST(CollbenchColl, VerificationCountsACorruptedElement) {
  auto comm = coll::Comm::from_environment();  // one rank, in this process
  for (auto kind : {collbench::SweepKind::Broadcast, collbench::SweepKind::AllGather,
                    collbench::SweepKind::ReduceScatter, collbench::SweepKind::Reduce}) {
    const collbench::SweepCollective collective(kind, *comm, coll::DataType::Int32,
                                                coll::ReduceOp::Sum, "");
    std::vector<std::byte> send(400), recv(400);
    const std::byte* input = collective.prepare(send.data(), recv.data(), 100, false);
    collective.call(input, recv.data(), 100);
    EXPECT_EQ(collective.wrong(input, recv.data(), 100), 0u);
    recv[40] ^= std::byte{1};
    EXPECT_EQ(collective.wrong(input, recv.data(), 100), 1u) << sweep_kind_name(kind);
  }
}

}  // namespace
