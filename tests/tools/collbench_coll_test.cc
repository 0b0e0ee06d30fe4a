// collbench --coll: every collective swept with verification, nccl-tests' sizes and bus
// factors, and a verification that notices a wrong result.
#include <gtest/gtest.h>

#include <cstdio>

#include "read_json.hpp"
#include "run_command.hpp"
#include "scratch_file.hpp"
#include "sweep_collective.hpp"

namespace {

using coll::testing::read_json;
using coll::testing::run_command;
using coll::testing::ScratchFile;

TEST(CollbenchColl, EverySweptCollectiveIsVerifiedWithItsBusFactor) {
  // 3 ranks: all-gather and reduce-scatter scale by (n-1)/n = 0.666..., the rest as nccl-tests.
  const std::vector<std::pair<std::string, double>> expected = {{"allreduce", 4.0 / 3},
                                                                {"broadcast", 1},
                                                                {"reduce", 1},
                                                                {"allgather", 2.0 / 3},
                                                                {"reducescatter", 2.0 / 3}};
  const ScratchFile json("coll.json");
  for (const auto& [name, factor] : expected) {
    for (const char* type : {"float", "bfloat16", "int8"}) {
      std::remove(json.path().c_str());  // a run that writes nothing must not pass on the last one
      const auto result =
          run_command(std::string(COLLBENCH_PATH) + " --coll " + name + " -d " + type +
                          " -o max -g 3 -b 1 -e 1M -f 32 -n 2 -w 1 --json " + json.path(),
                      120);
      ASSERT_EQ(result.exit_code, 0) << name << " " << type << ": " << result.output;
      EXPECT_NE(result.output.find("# collbench " + name + " sweep"), std::string::npos)
          << result.output;
      const auto report = read_json(json.path());
      EXPECT_EQ(report.at("collective"), name);
      EXPECT_EQ(report.at("ranks"), 3);
      EXPECT_NEAR(report.at("bus_factor").get<double>(), factor, 1e-9) << name;
      EXPECT_EQ(report.at("wrong_total"), 0) << name << " " << type;
      // -b 1 -e 1M -f 32: 1 B (no whole element of the wider types: count 0), 32 B, 1K, 32K and
      // 1M (-b 0 would sweep 0 B alone: 0 times the step factor stays 0).
      ASSERT_EQ(report.at("results").size(), 5u) << name << " " << type;
      for (const auto& row : report.at("results")) {
        EXPECT_EQ(row.at("out_of_place").at("wrong"), 0) << name << " " << type << " " << row;
        EXPECT_EQ(row.at("in_place").at("wrong"), 0) << name << " " << type << " " << row;
      }
    }
  }
}

TEST(CollbenchColl, BlockCollectivesSweepTheWholeVectorAsNcclTestsDo) {
  // 64 B of float over 3 ranks: 5 elements per rank, a vector of 15 (60 B).
  const ScratchFile json("allgather_vector.json");
  const auto result =
      run_command(std::string(COLLBENCH_PATH) +
                      " --coll allgather -g 3 -b 64 -e 64 -n 1 -w 0 --json " + json.path(),
                  60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto results = read_json(json.path()).at("results");
  ASSERT_EQ(results.size(), 1u) << results;
  EXPECT_EQ(results[0].at("bytes"), 60) << results;
  EXPECT_EQ(results[0].at("count"), 15) << results;
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
