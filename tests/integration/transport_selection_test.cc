// COLL_TRANSPORT across processes: an in-process transport cannot join rank processes, and says
// so (the job fails cleanly instead of hanging); an unknown name lists the known ones; `shaped:`
// needs a program that registers the link emulator; between nodes, every transport (auto with
// either COLL_NET, ucx or sockets alone) is exact; UCX settings in the environment override the
// library's TCP settings.
#include <gtest/gtest.h>

#include <utility>

#include "read_json.hpp"
#include "run_command.hpp"
#include "scratch_file.hpp"

namespace {

using coll::testing::read_json;
using coll::testing::run_command;
using coll::testing::ScratchFile;

const std::string kSmallSweep = " --ranks-per-node 2 -b 8 -e 8 -n 1 -w 0 -d float";

// collbench's small sweep on 2 nodes x 2 ranks under `environment` (VAR=value ...).
coll::testing::CommandResult run_on_two_nodes(const std::string& environment) {
  return run_command(environment + " " + std::string(COLLBENCH_PATH) + " --nodes 2" + kSmallSweep,
                     60);
}

TEST(TransportSelection, InprocRefusesRanksInSeveralProcesses) {
  const auto result =
      run_command("COLL_TRANSPORT=inproc " + std::string(COLLBENCH_PATH) + kSmallSweep, 60);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("rank 1: COLL_TRANSPORT=inproc joins only ranks that are threads "
                               "of one process"),
            std::string::npos)
      << result.output;
}

TEST(TransportSelection, UnknownTransportListsTheKnownOnes) {
  const auto result =
      run_command("COLL_TRANSPORT=verbs " + std::string(COLLBENCH_PATH) + kSmallSweep, 60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find(
                "unknown transport 'verbs' (COLL_TRANSPORT; known: auto, inproc, sockets, ucx, "
                "shaped:<transport>)"),
            std::string::npos)
      << result.output;
}

// The link emulator is a library of its own: a program that links libcoll alone (the C API
// example) and is asked for `shaped:` fails in one line naming it, where collbench runs.
TEST(TransportSelection, ShapedNeedsAProgramThatRegistersTheEmulator) {
  const auto result = run_command(
      "COLL_TRANSPORT=shaped:ucx COLL_SHAPE=intra=1e-6:1e-10,inter=1e-6:1e-10 " +
          std::string(COLLRUN_PATH) + " --ranks-per-node 2 " + C_API_EXAMPLE_PATH + " env",
      60);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("unknown transport wrapper 'shaped' (COLL_TRANSPORT; known: auto, "
                               "inproc, sockets, ucx): this program registered no such wrapper "
                               "(`shaped`, the link emulator, is registered by the programs that "
                               "link coll_emulator"),
            std::string::npos)
      << result.output;
}

// Each way of carrying the links is exact across nodes: by default (auto) shared memory inside a
// node and COLL_NET between nodes; one transport for every link (COLL_TRANSPORT=ucx, sockets).
// What the node's ranks share besides messages comes with any transport between processes.
TEST(TransportSelection, EveryTransportIsExactAcrossNodes) {
  const std::pair<std::string, std::string> cases[] = {
      {"COLL_NET=sockets",
       "ucx: 1 peer(s) over sm,self, 2 over tcp sockets(lo), send buffer 256K;"},
      {"COLL_NET=ucx", "ucx: 1 peer(s) over sm,self, 2 over tcp(lo);"},
      {"COLL_TRANSPORT=ucx", "ucx: 1 peer(s) over sm,self, 2 over tcp(lo);"},
      {"COLL_TRANSPORT=sockets",
       "sockets: 3 over tcp sockets(lo), send buffer 256K; cross-memory reads from 1 peer(s); "
       "node slots"}};
  for (const auto& [environment, links] : cases) {
    const ScratchFile json("transport.json");
    const auto result =
        run_command(environment + " " + std::string(COLLBENCH_PATH) +
                        " --nodes 2 --ranks-per-node 2 -b 4 -e 1M -f 8 -n 2 -w 1 -d float "
                        "--algo ring,halving_doubling,direct,hierarchical --rounds 1 --json " +
                        json.path(),
                    180);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_NE(result.output.find(links), std::string::npos) << environment << result.output;
    const auto report = read_json(json.path());
    EXPECT_EQ(report.at("wrong_total"), 0) << environment;
    EXPECT_EQ(report.at("results").size(), 4u * 7u) << environment;
  }
}

TEST(TransportSelection, UnknownNetworkPathIsAOneLineError) {
  const auto result = run_on_two_nodes("COLL_NET=carrier-pigeon");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("COLL_NET='carrier-pigeon': expected sockets or ucx"),
            std::string::npos)
      << result.output;
}

// COLL_SOCKET_SNDBUF: `auto` leaves the sockets' send buffers to the kernel (the header says
// so); a size out of range is a one-line error naming the variable.
TEST(TransportSelection, SocketSendBufferIsSetOrLeftToTheKernel) {
  const auto autotuned = run_on_two_nodes("COLL_SOCKET_SNDBUF=auto");
  ASSERT_EQ(autotuned.exit_code, 0) << autotuned.output;
  EXPECT_NE(autotuned.output.find("2 over tcp sockets(lo), send buffer autotuned"),
            std::string::npos)
      << autotuned.output;
  const auto tiny = run_on_two_nodes("COLL_SOCKET_SNDBUF=1K");
  EXPECT_NE(tiny.exit_code, 0) << tiny.output;
  EXPECT_NE(
      tiny.output.find("COLL_SOCKET_SNDBUF='1K': expected a size from 4K to 1G (such as 256K) "
                       "or auto"),
      std::string::npos)
      << tiny.output;
}

// The library's TCP settings (larger segments) give way as a whole to any of them in the
// environment: a receive segment smaller than the library's send segment would make UCX refuse
// to open the interface.
TEST(TransportSelection, TcpSettingsInTheEnvironmentReplaceTheLibrarysAll) {
  const ScratchFile json("tcp_settings.json");
  const auto result =
      run_command("COLL_NET=ucx UCX_TCP_RX_SEG_SIZE=64K UCX_WARN_UNUSED_ENV_VARS=n " +
                      std::string(COLLBENCH_PATH) +
                      " --nodes 2 -b 1M -e 1M -n 1 -w 0 -d float --json " + json.path(),
                  120);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto report = read_json(json.path());
  EXPECT_EQ(report.at("nodes"), 2);
  EXPECT_EQ(report.at("wrong_total"), 0);
  ASSERT_EQ(report.at("results").size(), 1u);
  EXPECT_EQ(report.at("results")[0].at("bytes"), 1048576);
}

}  // namespace
