// Peer-read all-reduce between ranks of one node: no message carries data. Each rank publishes the
// addresses of its buffers, reduces its 1/p block by reading the other ranks' inputs straight from
// their memory (NodeResources::peer_memory: cross-memory attach between processes, a plain copy
// between threads), then copies every other block of the result from the rank that reduced it.
// Buffers from allocate_shared (coll/shared_memory.hpp) are not even copied: the peers map them
// and load from them (NodeResources::peer_memory's view), with no system call per read; a plain
// input up to kStageAtMostBytes is copied into such memory first (NodeResources::staging) and
// published in its place, which costs one pass over it and saves the calls.
// Shared buffers are not staged: per rank that is the memory-bandwidth minimum of an all-reduce
// (read the input, read the peers' parts of one block, write the result; bench/memory_bound
// measures it).
// Three rounds order the reads: buffers published (inputs ready), block reduced (results
// ready), reading finished (buffers may be reused once every peer says so). Where the node's
// slots serve the group (SlotRounds) each is one hand-off through them, the first carrying the
// addresses and the argument check; elsewhere each is p-1 small messages, after the check.
// Where the transport cannot reach every pair of the group (ranks on several nodes, a kernel that
// refuses cross-memory attach, COLL_PEER_MEMORY=0), every rank of the group runs ring instead.
//
// Cost: 3 slot hand-offs (or 3 rounds of p-1 messages and the check's), then each rank reads
// (p-1)/p*M from peers for its block and (p-1)/p*M of results, at the intra-node beta (of p
// concurrent flows, where a node stages), each read paying a system call. Shared buffers' loads
// make no call and one copy (a message makes two), so their bytes cost half the message beta, and
// a round's p-1 messages arrive together (no call between them), so a round costs one alpha,
// and the loads wait twice for the peers' lines (at the reduction and at the copy). Measured at
// 2 ranks with a core each, 16 KiB-64 MiB, they beat every message algorithm by 1.4-3x in the
// build VM's fast phases; in its slow ones `shm` beats them up to 16-32 KiB
// (docs/algorithms.md, "Shared buffers"). The block's reduction reads one operand from cache (each
// peer piece is read into a cache-sized buffer just before it is added), so it moves 2/3 of the
// memory traffic gamma was measured with (c = a + b, all in memory). In place, the block's lines
// were last written by the peers, and its reads wait for them to cross cores
// (kLineCrossingSeconds).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "algorithms/partition.hpp"
#include "algorithms/peer_read_prices.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/slot_rounds.hpp"
#include "coll/bulk_copy.hpp"
#include "core/shared_regions.hpp"
#include "model/link_model.hpp"
#include "reduce/reducer.hpp"

namespace coll {
namespace {

using peer_read_prices::kCrossingLinesAtMostBytes;
using peer_read_prices::kLineBytes;
using peer_read_prices::kLineCrossingSeconds;
using peer_read_prices::kStageAtMostBytes;

// Peer data is read and reduced this many bytes at a time: small enough to stay in cache between
// the read and the reduction, large enough that the read's system call costs little.
constexpr std::size_t kPieceBytes = 256 * 1024;
// The peers read this rank's block of the result back (copy_block_of), so up to a few MiB its
// lines are still in their caches when the next call reduces into it, and every vector store of
// the reduction first fetches its line back from them. Below this size the block is reduced into
// a private piece and moved with the string copy (bulk_copy), which writes whole lines without
// fetching them. Larger blocks gain nothing, the peers no longer holding the lines (a default,
// docs/tuning.md, "Constants measured on the build VM").
constexpr std::size_t kPeersStillHoldBytes = 4 << 20;
// Where lines come back quickly (cores that share a cache) the extra copy costs more than it
// saves. The hand-off the ranks timed when they connected tells the two cases apart: above this,
// lines come back slowly (a default between the hand-offs timed in each case, docs/tuning.md,
// "Constants measured on the build VM").
constexpr double kLinesComeBackSlowlySeconds = 0.15e-6;

bool stages(std::size_t bytes) {
  return bytes <= kStageAtMostBytes;
}

enum Round : std::uint32_t { kPublished = 0, kReduced = 1, kFinished = 2 };

struct Published {
  std::uint64_t send = 0;
  std::uint64_t recv = 0;
  std::uint64_t bytes = 0;  // of each buffer: the reads stay inside what the owner passed
  SharedRegionRef send_region, recv_region;  // where allocate_shared made them: peers map them
};
// Copied through a slot's payload as bytes.
static_assert(std::is_trivially_copyable_v<Published> &&
              sizeof(Published) <= NodeSlots::kPayloadBytes);

SharedRegionRef region_holding(const void* buffer, std::size_t bytes) {
  return shared_region_of(buffer, bytes).value_or(SharedRegionRef{});
}

// The same answer on every rank of the group: the node map and PeerMemory's pairs are shared.
bool reaches_whole_group(const CollectiveContext& context) {
  PeerMemory* memory = context.peer_memory();
  if (memory == nullptr) return false;
  const Group& group = context.group;
  for (int a = 0; a < group.size(); ++a) {
    for (int b = a + 1; b < group.size(); ++b) {
      const int first = group.global(a), second = group.global(b);
      if (context.node_of_rank[first] != context.node_of_rank[second] ||
          !memory->connects(first, second)) {
        return false;
      }
    }
  }
  return true;
}

// Whether this rank's stores into lines its peers have read wait long for them: the node slots'
// hand-off as timed at connection; unknown (no slots, or ranks sharing cores, where it is not
// timed) counts as slow.
bool lines_come_back_slowly(const CollectiveContext& context) {
  const NodeSlots* slots = context.node_slots();
  const double handoff = slots != nullptr ? slots->handoff_seconds() : 0;
  return handoff <= 0 || handoff >= kLinesComeBackSlowlySeconds;
}

// The check, carried by the slots' first round, is completed on its own before messages move:
// a peer that called something else must fail the call before it is waited for.
void check_arguments_first(const CollectiveContext& context) {
  if (context.call_check == nullptr) return;
  context.call_check->send(nullptr, 0);
  context.call_check->receive();
}

class PeerReadAllreduce {
 public:
  PeerReadAllreduce(const CollectiveContext& context, const AllreduceArgs& args)
      : context_(context),
        args_(args),
        memory_(*context.peer_memory()),
        group_(context.group),
        elem_(dtype_size(args.type)),
        blocks_(args.count, static_cast<std::size_t>(group_.size())),
        published_(static_cast<std::size_t>(group_.size())),
        send_region_(region_holding(args.send, args.count * elem_)) {
    const std::size_t bytes = args_.count * elem_;
    if (stages(bytes) && context_.staging() != nullptr && send_region_.fd < 0) {
      // A power of two: the pool then holds a few sizes, whatever sizes the calls have.
      staged_ = context_.staging()->acquire(std::bit_ceil(bytes));
      stage_input();
    }
  }

  // Where the node's slots serve the group the three rounds are hand-offs through them, the
  // first carrying the addresses and the argument check; else messages, after the check.
  void run() {
    if (slots_serve(context_)) return run_through_slots();
    check_arguments_first(context_);
    run_with_messages();
  }

 private:
  Published publication() const {
    const std::size_t bytes = args_.count * elem_;
    if (staged_) {
      const SharedRegionRef region = region_holding(staged_->data(), bytes);
      return {address_of(staged_->data()), address_of(staged_->data()), bytes, region, region};
    }
    return {address_of(args_.send), address_of(args_.recv), bytes, send_region_,
            args_.recv == args_.send ? send_region_ : region_holding(args_.recv, bytes)};
  }

  void run_through_slots() {
    SlotRounds rounds(context_);
    const Published mine = publication();
    std::memcpy(rounds.begin(kPublished).payload, &mine, sizeof mine);
    rounds.publish_and_wait(sizeof mine);
    for (int peer = 0; peer < group_.size(); ++peer) {
      if (peer != group_.me) std::memcpy(&published_[peer], rounds.of(peer).payload, sizeof mine);
    }
    published_[group_.me] = mine;
    refuse_other_buffer_sizes(mine.bytes);
    reduce_my_block();
    rounds.begin(kReduced);
    rounds.publish_and_wait(0);
    for (int step = 1; step < group_.size(); ++step) copy_block_of(group_.index_after(step));
    rounds.begin(kFinished);
    rounds.publish_and_wait(0);
  }

  void run_with_messages() {
    const Published mine = publication();
    exchange(kPublished, &mine, published_.data(), sizeof(Published));
    refuse_other_buffer_sizes(mine.bytes);
    reduce_my_block();
    // Results are copied from each peer as soon as it says its block is ready.
    std::array<std::byte, 1> token{};
    std::vector<std::array<std::byte, 1>> tokens(published_.size());
    std::vector<Transport::Request> sends = post_sends(kReduced, token.data(), token.size());
    for (int step = 1; step < group_.size(); ++step) {
      const int peer = group_.index_after(step);
      Transport::Request ready = context_.transport.recv(
          group_.global(peer), context_.tags.make(group_.global(peer), kReduced),
          tokens[peer].data(), token.size());
      context_.transport.wait(ready);
      copy_block_of(peer);
    }
    context_.transport.wait_all(sends);
    exchange(kFinished, token.data(), tokens.data(), token.size());
  }

  // Sends `bytes` at `mine` to every peer and receives theirs into slot [peer] of `theirs`.
  void exchange(Round round, const void* mine, void* theirs, std::size_t bytes) {
    std::vector<Transport::Request> requests;
    for (int step = 1; step < group_.size(); ++step) {
      const int peer = group_.index_after(step);
      requests.push_back(context_.transport.recv(
          group_.global(peer), context_.tags.make(group_.global(peer), round),
          static_cast<std::byte*>(theirs) + static_cast<std::size_t>(peer) * bytes, bytes));
    }
    for (auto& send : post_sends(round, mine, bytes)) requests.push_back(send);
    context_.transport.wait_all(requests);
  }

  std::vector<Transport::Request> post_sends(Round round, const void* data, std::size_t bytes) {
    std::vector<Transport::Request> sends;
    for (int step = 1; step < group_.size(); ++step) {
      const int peer = group_.global(group_.index_after(step));
      sends.push_back(context_.transport.send(
          peer, context_.tags.make(group_.global(group_.me), round), data, bytes));
    }
    return sends;
  }

  // The peers read every block but this rank's own from the staging copy.
  void stage_input() {
    const auto me = static_cast<std::size_t>(group_.me);
    const std::size_t begin = blocks_.offset(me) * elem_;
    const std::size_t end = begin + blocks_.length(me) * elem_;
    const auto* send = static_cast<const std::byte*>(args_.send);
    bulk_copy(staged_->data(), send, begin);
    bulk_copy(staged_->data() + end, send + end, args_.count * elem_ - end);
  }

  // Even without the argument check, reading past a peer's buffer must not happen.
  void refuse_other_buffer_sizes(std::uint64_t bytes) const {
    refuse_other_sizes(context_, bytes, [&](int peer) { return published_[peer].bytes; });
  }

  // Block `me` of the result: this rank's input first, then the peers' in rank order, one
  // cache-sized piece at a time (in place, the input is consumed by the first addition).
  void reduce_my_block() {
    const auto me = static_cast<std::size_t>(group_.me);
    const std::size_t begin = blocks_.offset(me);
    const std::size_t length = blocks_.length(me);
    if (length == 0) return;  // fewer elements than ranks
    const std::size_t piece = std::max<std::size_t>(1, kPieceBytes / elem_);
    const auto* send = static_cast<const std::byte*>(args_.send);
    auto* recv = static_cast<std::byte*>(args_.recv);
    // The peers' parts of the block that this rank loads itself (shared buffers), else nullptr.
    std::vector<const std::byte*> views(published_.size(), nullptr);
    bool all_mapped = true;
    for (int peer = 0; peer < group_.size(); ++peer) {
      if (peer == group_.me) continue;
      views[peer] = memory_.view(group_.global(peer), published_[peer].send_region,
                                 published_[peer].send + begin * elem_, length * elem_);
      all_mapped = all_mapped && views[peer] != nullptr;
    }
    // Scratch pieces: one where read calls land (loads from mappings need none), one to reduce
    // into where the peers still hold the block's lines; none at all saves the pool's lock.
    const std::size_t piece_bytes = round_up_to_line(std::min(length, piece) * elem_);
    const bool privately =
        !staged_ && length * elem_ <= kPeersStillHoldBytes && lines_come_back_slowly(context_);
    const std::size_t read_bytes = all_mapped ? 0 : piece_bytes;
    const std::size_t scratch_bytes = read_bytes + (privately ? piece_bytes : 0);
    std::optional<BufferPool::Lease> scratch;
    if (scratch_bytes > 0) scratch = context_.pool.acquire(scratch_bytes);
    std::byte* read_target = all_mapped ? nullptr : scratch->data();
    std::byte* accumulator = privately ? scratch->data() + read_bytes : nullptr;
    for (std::size_t done = 0; done < length; done += piece) {
      const std::size_t count = std::min(piece, length - done);
      const std::size_t offset = (begin + done) * elem_;
      std::byte* result = staged_     ? staged_->data() + offset
                          : privately ? accumulator
                                      : recv + offset;
      const std::byte* accumulated = send + offset;
      for (int peer = 0; peer < group_.size(); ++peer) {
        if (peer == group_.me) continue;
        const std::byte* operand =
            views[peer] != nullptr ? views[peer] + done * elem_ : read_target;
        if (views[peer] == nullptr) {
          memory_.read(group_.global(peer), published_[peer].send + offset, read_target,
                       count * elem_);
        }
        context_.reduce(args_.type, args_.op, result, accumulated, operand, count);
        accumulated = result;
      }
      if (args_.op == ReduceOp::Avg) finish_average(args_.type, result, count, group_.size());
      if (staged_ || privately) bulk_copy(recv + offset, result, count * elem_);
    }
  }

  static std::size_t round_up_to_line(std::size_t bytes) {
    return (bytes + kLineBytes - 1) / kLineBytes * kLineBytes;
  }

  void copy_block_of(int peer) {
    const auto block = static_cast<std::size_t>(peer);
    const std::size_t offset = blocks_.offset(block) * elem_;
    const std::size_t bytes = blocks_.length(block) * elem_;
    if (bytes == 0) return;
    auto* target = static_cast<std::byte*>(args_.recv) + offset;
    const std::uint64_t remote = published_[peer].recv + offset;
    if (const std::byte* view =
            memory_.view(group_.global(peer), published_[peer].recv_region, remote, bytes)) {
      bulk_copy(target, view, bytes);
    } else {
      memory_.read(group_.global(peer), remote, target, bytes);
    }
  }

  const CollectiveContext& context_;
  const AllreduceArgs& args_;
  PeerMemory& memory_;
  const Group& group_;
  std::size_t elem_;
  Partition blocks_;
  std::vector<Published> published_;         // by group index
  SharedRegionRef send_region_;              // fd -1: a plain buffer
  std::optional<BufferPool::Lease> staged_;  // a plain input's copy the peers map
};

void peer_read_allreduce(const CollectiveContext& context, const AllreduceArgs& args) {
  if (trivial_allreduce(context, args)) return;
  if (!reaches_whole_group(context)) {
    check_arguments_first(context);
    return find_algorithm("ring")->run(context, args);
  }
  PeerReadAllreduce(context, args).run();
}

std::optional<model::Prediction> peer_read_cost(const model::CostParams& params,
                                                const model::Shape& shape, double m,
                                                const Tuning& tuning) {
  const int p = shape.ranks;
  if (shape.nodes > 1)
    return priced_as("ring", "peer_read", "across nodes", params, shape, m, tuning);
  if (!params.transport.peer_memory) {
    return priced_as("ring", "peer_read", "without peer memory", params, shape, m, tuning);
  }
  model::Prediction out{"peer_read"};
  if (p < 2) return out;
  const double peers_share = (p - 1.0) / p * m;
  // Reads: of each peer's part of this rank's block, one per piece, then each peer's block.
  const double pieces = std::max(1.0, std::ceil(m / p / static_cast<double>(kPieceBytes)));
  const double reads = (p - 1) * (pieces + 1);
  const bool mapped = params.call.peer_buffers_mapped;
  // A plain input is staged where reads are system calls (processes, not threads): then the
  // peers load it from a mapping as they load allocate_shared's buffers.
  const bool staged =
      !mapped && stages(static_cast<std::size_t>(m)) && params.transport.peer_read_call_s > 0;
  const bool loads = mapped || staged;
  // Through the node's slots a round is one hand-off and carries the argument check; with
  // messages, p-1 of them (arriving together where mapped loads leave no call between them),
  // after the check's own round.
  const bool slots = params.transport.slot_handoff_s > 0;
  out.latency_s = slots ? 3.0 * params.transport.slot_handoff_s
                        : 3.0 * (loads ? 1 : p - 1) * params.intra.alpha_s;
  // Loads from a mapping wait for the peer's lines twice, at the reduction and at the copy
  // (docs/tuning.md, "Constants measured on the build VM"). A read call's cost includes it.
  out.latency_s +=
      loads ? 2.0 * params.transport.peer_line_s : reads * params.transport.peer_read_call_s;
  // Every rank reads at once: on a node whose transfers pass a shared host staging path, p flows.
  out.bandwidth_s = 2.0 * peers_share * model::intra_beta(params, p) / (loads ? 2 : 1);
  // Staging copies M once: the peers' blocks into the mapping, its own block's result out of it.
  if (staged) out.bandwidth_s += m * params.intra.beta_s_per_byte / 2;
  out.reduction_s = 2.0 / 3.0 * peers_share * params.gamma_s_per_byte;
  // Priced where the node's slots timed a hand-off (ranks with a core each): nothing was
  // measured elsewhere.
  const bool lines_cross = params.call.in_place && params.transport.peer_line_s > 0;
  if (lines_cross) {
    out.bandwidth_s +=
        std::min(peers_share, kCrossingLinesAtMostBytes) / kLineBytes * kLineCrossingSeconds;
  }
  const std::string rounds =
      (slots ? "3 slot hand-offs" : model::detail_text("3 rounds of %d messages", p - 1)) +
      (loads && params.transport.peer_line_s > 0 ? ", 2 waits for the peers' lines" : "");
  out.detail =
      rounds + (staged ? "; M staged where the peers map it" : "") +
      (loads ? std::string("; loads of 2(p-1)/p*M from the peers' mappings")
             : model::detail_text("; %d reads of 2(p-1)/p*M from peers", static_cast<int>(reads))) +
      (lines_cross ? "; in place, the block's lines cross cores" : "");
  if (!slots) add_check_round(params, shape, tuning, out);
  return out;
}

const AlgorithmRegistration kPeerRead({.name = "peer_read",
                                       .run = peer_read_allreduce,
                                       .summary = "ranks of one node reduce straight from each "
                                                  "other's buffers (no staging); else ring",
                                       .order = 7,
                                       .cost = peer_read_cost,
                                       .carries_call_check = true,
                                       .compares_calls = true});

}  // namespace
}  // namespace coll
