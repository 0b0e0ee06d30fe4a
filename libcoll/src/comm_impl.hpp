// Comm::Impl: what stands behind a coll::Comm, shared by the files that implement it (comm*.cc).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/registry.hpp"
#include "argument_check.hpp"
#include "coll/comm.hpp"
#include "coll/selector.hpp"
#include "comm_family.hpp"
#include "core/memory_type.hpp"

namespace coll {

// What a name resolves to at one size: for buffers the peers read by system calls, and for
// buffers from allocate_shared, out of place and in place (the same algorithm unless a decision
// table's shared rules or the model tell them apart).
struct ResolvedAlgorithm {
  const AlgorithmInfo* plain = nullptr;
  const AlgorithmInfo* mapped = nullptr;
  const AlgorithmInfo* plain_in_place = nullptr;
  const AlgorithmInfo* mapped_in_place = nullptr;
};

struct Comm::Impl {
  std::shared_ptr<CommFamily> family;
  Config& config;
  Transport& transport;
  BufferPool& pool;
  Group world;           // this communicator's ranks, as ranks of the family's transport
  unsigned context = 0;  // the tag context (0: the communicator the family was built with)
  std::vector<int> node_of_member;  // dense node ids of this communicator's ranks
  std::uint64_t sequence = 0;
  std::string broken;       // the first error; a failed communicator refuses further calls
  std::string rank_prefix;  // "rank N: ", the start of this communicator's error messages
  std::optional<CheckBuffers> check_buffers;  // the argument check's, from its first use
  // The last few all-reduces' algorithms, by the name asked for and the size: training loops
  // repeat both, often alternating two (a barrier made of a one-byte all-reduce between timed
  // calls, a small bucket between large ones), and the selector's lookup and the registry's
  // search by name cost a tenth of a small all-reduce. A name and size always resolve the same
  // way on one communicator.
  struct RecentlyResolved {
    std::string asked;
    std::size_t bytes = 0;
    ResolvedAlgorithm resolved;
  };
  std::array<RecentlyResolved, 4> recently_resolved;
  std::size_t next_to_replace = 0;  // round robin
  // `auto`'s cost model over this communicator's node map, made on first use (a bad preset or
  // calibration file fails only then).
  std::once_flag selector_made;
  std::unique_ptr<Selector> selector;

  Impl(std::shared_ptr<CommFamily> shared, Group members, unsigned tag_context);
  // The communicator of every rank of a new family.
  static std::unique_ptr<Impl> whole(std::shared_ptr<CommFamily> shared);

  const std::string& where() const { return rank_prefix; }
  void check_usable() const {
    if (!broken.empty()) {
      throw Error(Status::InvalidUsage,
                  where() + "communicator unusable after an earlier error: " + broken);
    }
  }

  const Selector& cost_model();
  // The name asked for, "" meaning the communicator's default (COLL_ALGO).
  std::string asked_name(std::string_view algorithm) const {
    return std::string(algorithm.empty() ? std::string_view(config.algorithm) : algorithm);
  }
  std::string resolve_algorithm(std::string_view algorithm, std::size_t bytes, bool buffers_mapped,
                                bool in_place);
  // The algorithm `algorithm` (or "auto", or "" for COLL_ALGO) runs at `bytes`, for buffers the
  // peers read by system calls and for shared ones, out of place and in place; throws
  // InvalidArgument naming the available ones when it is unknown or unavailable here.
  ResolvedAlgorithm resolve_available(std::string_view algorithm, std::size_t bytes);
  const AlgorithmInfo* available(const std::string& name);
  // The algorithm that runs this all-reduce's buffers, through the recently resolved ones.
  const AlgorithmInfo& algorithm_for(const AllreduceArgs& args, std::string_view algorithm);
  void run_allreduce(const AllreduceArgs& args, std::string_view algorithm, std::uint64_t tag);
  // Checks the call with the other ranks and runs `body` as collective number `sequence + 1`;
  // `algorithm` (null: one that takes no part in the check) says whether it carries the check in
  // its first message, compares every rank's descriptor itself, and asks the cost model.
  template <typename Body>
  void run_collective(CallDescriptor call, Body&& body, const AlgorithmInfo* algorithm = nullptr);
  template <typename Work>
  void serialized(Work&& work);
  ProgressEngine& engine() {
    if (!family->engine) family->engine = std::make_unique<ProgressEngine>(*family->clock);
    return *family->engine;
  }

  void check_peer(int peer, const char* what) const {
    if (peer < 0 || peer >= world.size() || peer == world.me) {
      throw Error(Status::InvalidArgument,
                  where() + what + ": invalid peer rank " + std::to_string(peer));
    }
  }
};

// An all-reduce's arguments with each buffer's memory type (the barrier is a one-byte all-reduce).
inline AllreduceArgs describe_buffers(const void* send, void* recv, std::size_t count,
                                      DataType type, ReduceOp op) {
  const auto [send_memory, recv_memory] = memory_types_of(send, recv);
  return {send, recv, count, type, op, send_memory, recv_memory};
}

// Templates, so defined here: each file that runs a collective instantiates them.
template <typename Body>
void Comm::Impl::run_collective(CallDescriptor call, Body&& body, const AlgorithmInfo* algorithm) {
  const bool carries_check = algorithm != nullptr && algorithm->carries_call_check;
  const bool compares_calls = algorithm != nullptr && algorithm->compares_calls;
  check_usable();
  call.sequence = ++sequence;
  try {
    transport.check_interrupt();
    const auto on_world = [&](CallCheck* carried_check) {
      body(CollectiveContext{transport, pool, world, family->rank_map.node_of_rank,
                             TagSpace(call.sequence, 0, context), config.tuning, carried_check,
                             algorithm && algorithm->asks_cost_model ? &cost_model() : nullptr,
                             &family->node, family->clock});
    };
    // The check lives on the stack, not in a std::optional: libstdc++ zero-fills an empty
    // optional's 152 bytes, 4 % of an 8-byte all-reduce's cycles (perf, 2 ranks).
    if (config.tuning.check_arguments && world.size() > 1) {
      if (!check_buffers) check_buffers.emplace(pool);
      NeighbourCheck check(transport, *check_buffers, world, TagSpace(call.sequence, 15, context),
                           call, compares_calls);
      if (!carries_check) check.complete();  // a round of its own, before the collective
      on_world(carries_check ? &check : nullptr);
      check.complete();
    } else {
      on_world(nullptr);
    }
  } catch (const Error& error) {
    broken = call.describe() + ": " + error.what();
    transport.mark_failed(where() + broken);
    throw Error(error.status(), where() + broken);
  }
}

// Runs `work` on the engine's thread when the engine runs (UCX is then used from that thread
// only), else here.
template <typename Work>
void Comm::Impl::serialized(Work&& work) {
  const auto& engine = family->engine;
  if (engine && !engine->on_engine_thread()) {
    engine->submit(std::forward<Work>(work))->wait();
  } else {
    work();
  }
}

}  // namespace coll
