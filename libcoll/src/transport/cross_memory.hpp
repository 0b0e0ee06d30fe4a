// PeerMemory between processes of one host through cross-memory attach (Linux
// process_vm_readv: one kernel copy from the peer's pages into ours). The kernel may refuse it
// (ptrace policy, seccomp filters), so the ranks probe one another when the transport starts and
// agree on which pairs work. COLL_PEER_MEMORY=0 turns it off (every pair then uses messages).
#pragma once

#include <sys/types.h>

#include <memory>
#include <vector>

#include "transport/peer_mappings.hpp"
#include "transport/peer_memory.hpp"

namespace coll {

class Bootstrap;

class CrossMemory final : public PeerMemory {
 public:
  // Collective over `bootstrap`: every rank calls it. `node_of_rank` (indexed by rank) says which
  // ranks share this rank's host; only those are probed.
  static std::unique_ptr<CrossMemory> connect(Bootstrap& bootstrap,
                                              const std::vector<int>& node_of_rank);

  bool connects(int a, int b) const override;
  void read(int peer, std::uint64_t remote, void* local, std::size_t bytes) override;
  // A peer's allocate_shared region, mapped into this process (PeerMappings).
  const std::byte* view(int peer, const SharedRegionRef& region, std::uint64_t remote,
                        std::size_t bytes) override;
  double read_call_seconds() const override { return read_call_seconds_; }

 private:
  CrossMemory(int me, std::vector<pid_t> pids, std::vector<std::vector<bool>> pairs,
              double read_call);
  std::vector<pid_t> pids_;               // by rank
  std::vector<std::vector<bool>> pairs_;  // [a][b]: both probes succeeded
  double read_call_seconds_;              // the median of the ranks' timed probe reads
  PeerMappings mappings_;
};

}  // namespace coll
