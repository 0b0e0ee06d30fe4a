// The C API from a separate C program, bootstrapped both ways; and the MPI bootstrap.
#include <gtest/gtest.h>

#include "coll/clock.hpp"
#include "run_command.hpp"

namespace {

using coll::testing::run_command;

TEST(CApi, InitFromEnvironmentUnderTheLauncher) {
  const auto result = run_command(
      std::string(COLLRUN_PATH) + " --ranks-per-node 3 " + C_API_EXAMPLE_PATH + " env", 60);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("rank 2 of 3: c api ok"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("rank 2 of 3: backend collectives ok"), std::string::npos)
      << result.output;
}

TEST(CApi, InitFromUniqueId) {
  const auto result = run_command(std::string(C_API_EXAMPLE_PATH) + " id 4", 60);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (int rank = 0; rank < 4; ++rank) {
    for (const char* part : {": c api ok", ": backend collectives ok"}) {
      EXPECT_NE(result.output.find("rank " + std::to_string(rank) + " of 4" + part),
                std::string::npos)
          << result.output;
    }
  }
}

// The NCCL-shaped start-up as an MPI program does it, on one host with no COLL_* variable: rank 0's
// collGetUniqueId, the id sent by MPI_Bcast, collCommInitRank; and recovery on that path: after a
// failed all-reduce every rank aborts, rank 0 makes a new id and the ranks init again from it.
// Across hosts: tests/multihost/uniqueid_across_hosts.sh.
TEST(CApi, UniqueIdSentOverMpiInitsAndRecoversAfterAnAbort) {
  for (const char* mode : {"init", "abort-recreate"}) {
    const auto result = run_command("mpirun --allow-run-as-root --oversubscribe -np 3 " +
                                        std::string(UNIQUEID_PROGRAM_PATH) + " " + mode,
                                    120);
    EXPECT_EQ(result.exit_code, 0) << mode << ":\n" << result.output;
    for (const char* rank : {"rank 0: ", "rank 1: ", "rank 2: "}) {
      EXPECT_NE(result.output.find(rank + std::string(mode) + " ok"), std::string::npos)
          << result.output;
    }
  }
}

TEST(AsyncApi, QueuedAllreducesCompleteInOrderAndExact) {
  for (const char* shape : {"--ranks-per-node 3", "--nodes 2 --ranks-per-node 2"}) {
    const auto result = run_command(
        std::string(COLLRUN_PATH) + " " + shape + " " + RANK_PROGRAM_PATH + " async", 120);
    EXPECT_EQ(result.exit_code, 0) << shape << ": " << result.output;
    EXPECT_NE(result.output.find("wrong 0"), std::string::npos) << result.output;
  }
}

TEST(AsyncApi, FusedAllreduceOfScatteredTensorsIsExact) {
  const auto result =
      run_command(std::string(COLLRUN_PATH) + " --nodes 3 " + RANK_PROGRAM_PATH + " fused", 120);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("wrong 0"), std::string::npos) << result.output;
}

TEST(AsyncApi, RanksQueueingInDifferentOrdersGetAnErrorSayingSo) {
  const auto result = run_command("COLL_TIMEOUT=20 " + std::string(COLLRUN_PATH) +
                                      " --ranks-per-node 2 " + RANK_PROGRAM_PATH + " misordered",
                                  60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("issued their collectives in different orders"), std::string::npos)
      << result.output;
}

TEST(MpiBootstrap, RingIsBitExactUnderMpirun) {
  const auto result = run_command("mpirun --allow-run-as-root --oversubscribe -np 3 " +
                                      std::string(RANK_PROGRAM_PATH) + " check ring 0 1 2 7 1000",
                                  180);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("wrong 0"), std::string::npos) << result.output;
}

TEST(MpiBootstrap, NativeMpiBaselineIsBitExact) {
  const auto result =
      run_command("mpirun --allow-run-as-root --oversubscribe -np 3 " +
                      std::string(RANK_PROGRAM_PATH) + " check native_mpi 0 1 2 7 1000",
                  180);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("wrong 0"), std::string::npos) << result.output;
}

// MPI is initialized once per process: a second communicator, after the first was destroyed or
// aborted, must find it still up, and the process must finalize it at exit (mpirun fails a rank
// that leaves without MPI_Finalize).
TEST(MpiBootstrap, CommunicatorsAreMadeAgainAfterDestroyAndAfterAbort) {
  for (const char* mode : {"recreate", "abort-recreate"}) {
    const auto result =
        run_command("COLL_TIMEOUT=20 mpirun --allow-run-as-root --oversubscribe -np 3 " +
                        std::string(LIFECYCLE_PROGRAM_PATH) + " " + mode,
                    120);
    EXPECT_EQ(result.exit_code, 0) << mode << ":\n" << result.output;
    for (const char* rank : {"rank 0: ", "rank 1: ", "rank 2: "}) {
      EXPECT_NE(result.output.find(rank + std::string(mode) + " ok"), std::string::npos)
          << result.output;
    }
  }
}

// A rank that never comes to a communicator's set-up is an error on the others within twice
// COLL_TIMEOUT (a rank may take COLL_TIMEOUT to fail its last collective before it joins), not
// a wait in MPI forever; they leave without MPI_Finalize, so mpirun ends the late rank too.
TEST(MpiBootstrap, ARankThatNeverJoinsIsAnErrorWithinTwiceTheTimeout) {
  const double start = coll::now_seconds();
  const auto result =
      run_command("COLL_TIMEOUT=3 mpirun --allow-run-as-root --oversubscribe -np 3 " +
                      std::string(LIFECYCLE_PROGRAM_PATH) + " late-rejoin",
                  120);
  EXPECT_NE(result.exit_code, 0) << result.output;
  for (const char* rank : {"rank 0: ", "rank 1: "}) {
    EXPECT_NE(result.output.find(rank + std::string("late-rejoin ok")), std::string::npos)
        << result.output;
  }
  EXPECT_NE(result.output.find("not every rank joined within 6 s (twice COLL_TIMEOUT)"),
            std::string::npos)
      << result.output;
  EXPECT_LT(coll::now_seconds() - start, 40) << result.output;
}

// A rank whose own set-up fails (here an unknown transport on rank 1 only) leaves without
// MPI_Finalize, which would wait for the peers it left in the bootstrap's exchange: mpirun then
// ends them at once, long before their COLL_TIMEOUT of 30 s.
TEST(MpiBootstrap, ARankWhoseSetUpFailsEndsTheJobBeforeTheTimeout) {
  const double start = coll::now_seconds();
  const auto result = run_command(
      "COLL_TIMEOUT=30 mpirun --allow-run-as-root --oversubscribe -np 3 -x COLL_TIMEOUT sh -c "
      "'if [ $OMPI_COMM_WORLD_RANK = 1 ]; then export COLL_TRANSPORT=bogus; fi; exec " +
          std::string(COLLBENCH_PATH) + " -b 8 -e 8 -n 1 -w 0'",
      120);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("unknown transport 'bogus'"), std::string::npos) << result.output;
  EXPECT_LT(coll::now_seconds() - start, 20) << result.output;
}

TEST(NativeMpi, UnavailableOutsideMpiWithAClearError) {
  const auto result = run_command(std::string(COLLBENCH_PATH) + " --algo native_mpi", 30);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("native_mpi"), std::string::npos) << result.output;
}

}  // namespace
