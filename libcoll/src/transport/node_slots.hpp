// Slots in a shared-memory segment of each node, through which its ranks hand each other small
// vectors without a message: a rank writes its vector into its own slot and publishes it with
// one store of a round number, and its peers read it in place once they see that number (the
// `shm` all-reduce). One cache line moves per hand-off, where a message pays the transport's
// send and receive paths.
//
// Every communicator has its own slots (by tag context), every rank two buffers in them, used in
// turn: a rank reuses a buffer only two rounds later, and every round waits for every rank's
// publication, so no peer is still reading it. A communicator clears its rank's slots when it is
// destroyed, so the next one with its context never reads a stale round. COLL_NODE_SLOTS=0 turns
// the slots off.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace coll {

class Bootstrap;

class NodeSlots {
 public:
  static constexpr std::size_t kPayloadBytes = 64 << 10;
  static constexpr std::size_t kDescriptorBytes = 64;  // the argument check's call descriptor
  static constexpr unsigned kContexts = 8;             // communicators (tag contexts) served
  static constexpr std::size_t kProbeBytes = 128;      // the hand-off timing's two lines

  // The round, the digest of the call's descriptor and the first 48 bytes of payload share the
  // first line: a peer that sees the round has them with it, so a small vector crosses between
  // cores as one line. The full descriptor, at the end, is read only when digests differ. Where
  // the argument check is off, an algorithm may put its call's size in the digest instead.
  struct alignas(64) Buffer {
    std::atomic<std::uint64_t> round{0};  // published last; written after everything else
    std::uint64_t call_digest;
    std::byte payload[kPayloadBytes];
    std::byte descriptor[kDescriptorBytes];
  };

  // Collective over `bootstrap`: every rank calls it. Null when no node has two ranks or when a
  // rank of some node could not map its segment (then no rank uses slots, so all choose alike).
  // `oversubscribed`: ranks outnumber cores (the hand-off is then not timed).
  static std::unique_ptr<NodeSlots> connect(Bootstrap& bootstrap,
                                            const std::vector<int>& node_of_rank,
                                            bool oversubscribed);
  // The size of a node's segment.
  static std::size_t bytes(int local_ranks);
  // For ranks that are threads of one process (one node): `memory`, zeroed and bytes(ranks)
  // long, is shared by every rank's slots. The hand-off is not timed.
  static std::unique_ptr<NodeSlots> in_process(std::shared_ptr<void> memory, int ranks, int me);

  // Whether ranks `a` and `b` share slots (same node): the same answer on every rank.
  bool connects(int a, int b) const {
    const auto size = static_cast<int>(node_of_rank_.size());
    return a >= 0 && b >= 0 && a < size && b < size && node_of_rank_[a] == node_of_rank_[b];
  }
  // Rank `rank`'s buffer `which` (0 or 1) in `context`'s slots; context < kContexts, rank on
  // this node.
  Buffer& buffer(unsigned context, int rank, int which) {
    return turn_buffers(context, which)[stride() * std::size_t(local_index_[rank])];
  }
  // The same buffers as an array: rank r's is element stride() * local_index(r).
  Buffer* turn_buffers(unsigned context, int which) {
    return first_buffer_ + std::size_t(context) * std::size_t(local_ranks_) * stride() +
           std::size_t(which);
  }
  static constexpr std::size_t stride() { return 2; }
  int local_index(int rank) const { return local_index_[rank]; }
  // The buffer this rank writes next in `context`, and the same turn's buffer of every peer
  // (every rank of a communicator takes the same turns).
  int turn(unsigned context) const { return static_cast<int>(rounds_[context] & 1); }
  void next_turn(unsigned context) { ++rounds_[context]; }
  // The communicator of `context` is gone: this rank's slots there read as never written.
  void clear(unsigned context);

  // One hand-off's latency (a published round seen by a peer), as the ranks measured it when
  // they connected; the same on every rank. 0 when not measured (ranks outnumber cores, or the
  // partner lost its core for the whole timing).
  double handoff_seconds() const { return handoff_seconds_; }

 private:
  struct Probe;
  NodeSlots(std::shared_ptr<void> memory, std::vector<int> node_of_rank, int me);
  double time_handoff(bool oversubscribed);

  std::shared_ptr<void> memory_;  // the node's segment (zeroed when made)
  Buffer* first_buffer_;          // after the probe lines
  std::vector<int> node_of_rank_;
  std::vector<int> local_index_;  // by rank: its position among the ranks of its node
  int me_;
  int local_ranks_;
  std::uint64_t rounds_[kContexts] = {};  // this rank's turns taken, per context
  double handoff_seconds_ = 0;
};

}  // namespace coll
