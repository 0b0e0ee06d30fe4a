// Hostile clients of a running launcher's store: the launcher holds little memory for clients
// without the token, and a client that never reads its replies neither keeps the abort from
// the ranks nor keeps the launcher alive.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "bootstrap/socket.hpp"
#include "coll/clock.hpp"
#include "coll/error.hpp"
#include "run_command.hpp"

namespace {

using coll::testing::count_processes;
using coll::testing::run_command;

long resident_kib(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

TEST(StoreHostile, UnauthenticatedClientsCannotGrowTheLauncher) {
  // The rank prints the launcher's pid and store, then waits to be terminated.
  FILE* job =
      ::popen((std::string(COLLRUN_PATH) + " -- /bin/sh -c 'echo $PPID $COLL_STORE; exec sleep 60'")
                  .c_str(),
              "r");
  ASSERT_NE(job, nullptr);
  char line[256] = {};
  ASSERT_NE(std::fgets(line, sizeof line, job), nullptr);
  int launcher = 0;
  char store[200] = {};
  ASSERT_EQ(std::sscanf(line, "%d %199s", &launcher, store), 2) << line;
  const long before_kib = resident_kib(launcher);

  // Eight clients announce 16 MiB frames and start sending them, without the token.
  const auto [host, port] = coll::split_host_port(store, "store");
  std::vector<coll::Socket> clients;
  const std::string header("\x00\xff\xff\xff", 4);
  const std::string chunk(1u << 20, 'x');
  std::size_t refused = 0;
  for (int i = 0; i < 8; ++i) {
    clients.push_back(coll::Socket::connect(host, port, 5));
    try {
      clients.back().send_all(header);
      for (int mib = 0; mib < 16; ++mib) clients.back().send_all(chunk);
    } catch (const coll::Error&) {
      ++refused;  // the store hung up on it
    }
  }
  const long after_kib = resident_kib(launcher);
  ::kill(launcher, SIGTERM);
  ::pclose(job);
  EXPECT_EQ(refused, clients.size());
  EXPECT_LT(after_kib - before_kib, 4096)
      << "launcher grew from " << before_kib << " to " << after_kib << " KiB";
}

TEST(StoreHostile, StuckClientKeepsNeitherTheAbortNorTheLauncher) {
  const double start = coll::now_seconds();
  const auto result = run_command(
      std::string("COLL_LAUNCH_GRACE=30 ") + COLLRUN_PATH + " --ranks-per-node 2 " + STORE_HOG_PATH,
      60);
  const double elapsed = coll::now_seconds() - start;
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_NE(result.output.find("store_hog: rank 1 heard the abort: rank 0 exited with status 1"),
            std::string::npos)
      << result.output;
  // Whether the store drops the client before the job ends depends on how far it got through
  // the requests: the drop itself is
  // StoreHostile.ClientThatNeverReadsIsDroppedAndOthersHearTheAbort.
  EXPECT_LT(elapsed, 10) << result.output;
  EXPECT_EQ(count_processes(STORE_HOG_PATH), 0);
}

}  // namespace
