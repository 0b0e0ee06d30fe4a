// collrun as a launcher people know from mpirun: --help, -np, programs found on PATH, and a
// clear error or warning instead of a confusing failure; ranks pinned to cores as mpirun pins them.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "run_command.hpp"
#include "scratch_file.hpp"

namespace {

using coll::testing::run_command;
using coll::testing::ScratchFile;

std::string collrun(const std::string& args) {
  return std::string(COLLRUN_PATH) + " " + args;
}

TEST(Collrun, HelpListsTheOptionsAndSucceeds) {
  const auto result = run_command(collrun("--help"), 30);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (const char* option : {"-np N", "--nodes N", "--ranks-per-node G", "--node-sizes", "PATH"}) {
    EXPECT_NE(result.output.find(option), std::string::npos) << option << ": " << result.output;
  }
}

TEST(Collrun, NpStartsThatManyRanksOfAProgramFoundOnPath) {
  // printenv is found on PATH, as mpirun finds it; each rank prints its own COLL_RANK/SIZE.
  const auto result = run_command(collrun("-np 3 printenv COLL_SIZE COLL_RANK"), 60);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("3\n0\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("[rank 1] 3\n[rank 1] 1\n"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("[rank 2] 2\n"), std::string::npos) << result.output;
}

TEST(Collrun, NpSplitsOverNodesOrSaysWhyItCannot) {
  const auto even = run_command(collrun("-np 4 --nodes 2 printenv COLL_NODE"), 60);
  ASSERT_EQ(even.exit_code, 0) << even.output;
  EXPECT_NE(even.output.find("[rank 3] 1\n"), std::string::npos) << even.output;
  const auto uneven = run_command(collrun("-np 3 --nodes 2 true"), 30);
  EXPECT_EQ(uneven.exit_code, 2) << uneven.output;
  EXPECT_NE(uneven.output.find("-np 3 does not match --nodes 2"), std::string::npos)
      << uneven.output;
}

TEST(Collrun, AProgramThatCannotStartIsNamedWithTheReason) {
  const auto missing = run_command(collrun("-np 2 no-such-program-for-collrun"), 30);
  EXPECT_EQ(missing.exit_code, 127) << missing.output;
  EXPECT_NE(missing.output.find("cannot start 'no-such-program-for-collrun': not found in PATH"),
            std::string::npos)
      << missing.output;

  const auto no_file = run_command(collrun("./no/such/file"), 30);
  EXPECT_EQ(no_file.exit_code, 127) << no_file.output;
  EXPECT_NE(no_file.output.find("cannot start './no/such/file': No such file or directory"),
            std::string::npos)
      << no_file.output;

  const ScratchFile not_executable("collrun_not_executable");
  std::ofstream(not_executable.path()) << "#!/bin/sh\necho hello\n";
  ::chmod(not_executable.path().c_str(), 0644);
  const auto denied = run_command(collrun(not_executable.path()), 30);
  EXPECT_EQ(denied.exit_code, 127) << denied.output;
  EXPECT_NE(denied.output.find("cannot start '" + not_executable.path() + "': Permission denied"),
            std::string::npos)
      << denied.output;

  // Executable but not a program: exec itself fails, in the rank, which says why.
  const ScratchFile not_a_program("collrun_not_a_program");
  std::ofstream(not_a_program.path()) << "not a program\n";
  ::chmod(not_a_program.path().c_str(), 0755);
  const auto bad_format = run_command(collrun(not_a_program.path()), 30);
  EXPECT_EQ(bad_format.exit_code, 127) << bad_format.output;
  EXPECT_NE(bad_format.output.find("cannot execute " + not_a_program.path() +
                                   ": not an executable format"),
            std::string::npos)
      << bad_format.output;
}

TEST(Collrun, WarnsWhenRanksOutnumberCoresAndOnlyThen) {
  cpu_set_t set;
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  const int cores = CPU_COUNT(&set);
  const auto crowded = run_command(collrun("-np " + std::to_string(cores + 1) + " true"), 60);
  EXPECT_EQ(crowded.exit_code, 0) << crowded.output;
  EXPECT_NE(crowded.output.find("warning: " + std::to_string(cores + 1) + " ranks on " +
                                std::to_string(cores) + " core(s)"),
            std::string::npos)
      << crowded.output;
  const auto fits = run_command(collrun("-np 1 true"), 30);
  EXPECT_EQ(fits.exit_code, 0) << fits.output;
  EXPECT_EQ(fits.output.find("warning"), std::string::npos) << fits.output;
}

// What /proc/self/status says of the CPUs a process may run on: "0-1", "1".
std::string allowed_cpus_line(const std::string& status) {
  const std::string key = "Cpus_allowed_list:\t";
  const auto at = status.find(key);
  if (at == std::string::npos) return "";
  const auto start = at + key.size();
  return status.substr(start, status.find('\n', start) - start);
}

// Rank r's line of `grep Cpus_allowed_list /proc/self/status` run by collrun: "[rank r] " starts
// it, except for rank 0, whose output collrun passes through as it is.
std::string rank_cpus(const std::string& output, int rank) {
  const std::string line = (rank == 0 ? "\n" : "[rank " + std::to_string(rank) + "] ") +
                           std::string("Cpus_allowed_list:");
  const auto at = ("\n" + output).find(line);
  return at == std::string::npos ? "" : allowed_cpus_line(output.substr(at));
}

TEST(Collrun, PinsEachRankToACoreRoundRobinUnlessToldNot) {
  cpu_set_t set;
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  const int ranks = static_cast<int>(cpus.size()) + 1;  // one core gets two ranks
  const std::string show = " grep Cpus_allowed_list /proc/self/status";

  const auto pinned = run_command(collrun("-np " + std::to_string(ranks) + show), 60);
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  for (int rank = 0; rank < ranks; ++rank) {
    EXPECT_EQ(rank_cpus(pinned.output, rank), std::to_string(cpus[rank % cpus.size()]))
        << "rank " << rank << ": " << pinned.output;
  }

  std::ifstream own_status("/proc/self/status");
  const std::string own((std::istreambuf_iterator<char>(own_status)), {});
  const auto free = run_command("COLL_BIND=none " + collrun("-np 2" + show), 60);
  ASSERT_EQ(free.exit_code, 0) << free.output;
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(rank_cpus(free.output, rank), allowed_cpus_line(own)) << free.output;
  }

  const auto wrong = run_command("COLL_BIND=socket " + collrun("-np 2 true"), 30);
  EXPECT_NE(wrong.exit_code, 0) << wrong.output;
  EXPECT_NE(
      wrong.output.find("COLL_BIND='socket': expected core (pin each rank to a core) or none"),
      std::string::npos)
      << wrong.output;
}

}  // namespace
