#include "transport/cross_memory.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "coll/clock.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

// What each rank publishes for its probe: a word whose value the peers can predict.
std::uint64_t probe_value(pid_t pid) {
  return 0x636f6c6c00000000ull ^ static_cast<std::uint64_t>(pid);
}

ssize_t read_once(pid_t pid, std::uint64_t remote, void* local, std::size_t bytes) {
  iovec local_iov{local, bytes};
  iovec remote_iov{reinterpret_cast<void*>(static_cast<std::uintptr_t>(remote)), bytes};
  return ::process_vm_readv(pid, &local_iov, 1, &remote_iov, 1, 0);
}

// The fastest of a few 8-byte reads of a peer's probe word, in nanoseconds: a read's cost
// besides its bytes (the system call, which on some VMs costs as much as several small messages).
long long time_small_read(pid_t pid, std::uint64_t address) {
  constexpr int kReads = 16;
  double fastest = 1;
  for (int i = 0; i < kReads; ++i) {
    std::uint64_t seen = 0;
    const double start = now_seconds();
    read_once(pid, address, &seen, sizeof seen);
    fastest = std::min(fastest, now_seconds() - start);
  }
  return std::llround(fastest * 1e9);
}

// The median of the ranks' timings, each after its row's `size` pair flags and a space ("-1":
// did not time), in seconds: the same on every rank.
double agreed_read_call_seconds(const std::vector<std::string>& rows, std::size_t size) {
  std::vector<long long> timed;
  for (const std::string& row : rows) {
    if (row.size() <= size + 1) continue;
    const long long ns = std::atoll(row.c_str() + size + 1);
    if (ns >= 0) timed.push_back(ns);
  }
  if (timed.empty()) return 0;
  std::sort(timed.begin(), timed.end());
  return double(timed[timed.size() / 2]) * 1e-9;
}

}  // namespace

std::unique_ptr<CrossMemory> CrossMemory::connect(Bootstrap& bootstrap,
                                                  const std::vector<int>& node_of_rank) {
  const int me = bootstrap.rank();
  const int size = bootstrap.size();
  const bool enabled = env_integer("COLL_PEER_MEMORY", 0, 1).value_or(1) != 0;
  const pid_t pid = ::getpid();
  // Peers read it between the two allgathers: it lives until the second one has completed.
  const std::uint64_t probe = probe_value(pid);

  const auto published = bootstrap.allgather(
      "cma/pid", std::to_string(pid) + " " + std::to_string(address_of(&probe)));
  std::vector<pid_t> pids(static_cast<std::size_t>(size));
  std::string mine(static_cast<std::size_t>(size), '0');
  long long read_ns = -1;
  for (int peer = 0; peer < size; ++peer) {
    unsigned long long peer_pid = 0, address = 0;
    if (std::sscanf(published[peer].c_str(), "%llu %llu", &peer_pid, &address) != 2) {
      throw Error(
          Status::InternalError,
          "rank " + std::to_string(peer) + " published a malformed process id: " + published[peer]);
    }
    pids[peer] = static_cast<pid_t>(peer_pid);
    if (!enabled || peer == me || node_of_rank[peer] != node_of_rank[me]) continue;
    std::uint64_t seen = 0;
    if (read_once(pids[peer], address, &seen, sizeof seen) == sizeof seen &&
        seen == probe_value(pids[peer])) {
      mine[peer] = '1';
      if (read_ns < 0) read_ns = time_small_read(pids[peer], address);
    }
  }
  // Everyone agrees on every pair: a pair works when both of its probes did. Each row carries
  // its rank's timed read after the pair flags.
  const auto rows = bootstrap.allgather("cma/probe", mine + " " + std::to_string(read_ns));
  std::vector<std::vector<bool>> pairs(static_cast<std::size_t>(size),
                                       std::vector<bool>(static_cast<std::size_t>(size)));
  for (int a = 0; a < size; ++a) {
    for (int b = 0; b < size; ++b) pairs[a][b] = rows[a][b] == '1' && rows[b][a] == '1';
  }
  return std::unique_ptr<CrossMemory>(
      new CrossMemory(me, std::move(pids), std::move(pairs),
                      agreed_read_call_seconds(rows, static_cast<std::size_t>(size))));
}

// A collective views at most two buffers of each peer, and the communicators sharing this
// transport may run one each at once: room for a few such collectives, so none loses a view.
CrossMemory::CrossMemory(int me, std::vector<pid_t> pids, std::vector<std::vector<bool>> pairs,
                         double read_call)
    : pids_(std::move(pids)),
      pairs_(std::move(pairs)),
      read_call_seconds_(read_call),
      mappings_(me, static_cast<int>(pids_.size()), 8 * pids_.size() + 16) {}

bool CrossMemory::connects(int a, int b) const {
  const auto size = static_cast<int>(pairs_.size());
  return a >= 0 && b >= 0 && a < size && b < size && pairs_[a][b];
}

const std::byte* CrossMemory::view(int peer, const SharedRegionRef& region, std::uint64_t remote,
                                   std::size_t bytes) {
  return mappings_.view(peer, pids_[peer], region, remote, bytes);
}

void CrossMemory::read(int peer, std::uint64_t remote, void* local, std::size_t bytes) {
  auto* target = static_cast<std::byte*>(local);
  while (bytes > 0) {
    const ssize_t got = read_once(pids_[peer], remote, target, bytes);
    if (got <= 0) {
      const int error = got < 0 ? errno : EFAULT;
      throw Error(Status::SystemError, "reading " + std::to_string(bytes) + " bytes of rank " +
                                           std::to_string(peer) +
                                           "'s memory failed: " + std::strerror(error));
    }
    target += got;
    remote += static_cast<std::uint64_t>(got);
    bytes -= static_cast<std::size_t>(got);
  }
}

}  // namespace coll
