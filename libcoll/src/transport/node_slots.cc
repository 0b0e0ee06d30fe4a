#include "transport/node_slots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "coll/clock.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "core/log.hpp"
#include "transport/shared_segment.hpp"

namespace coll {

// Two lines at the start of each segment, on which its first two ranks time the hand-off.
struct NodeSlots::Probe {
  alignas(64) std::atomic<std::uint64_t> ping{0};
  alignas(64) std::atomic<std::uint64_t> pong{0};
};

namespace {

constexpr int kHandoffRounds = 200;
constexpr double kHandoffBudgetSeconds = 0.05;  // a descheduled partner must not stall start-up

// Waits until `word` holds `value`; false when `deadline` (seconds) passes first.
bool await_value(const std::atomic<std::uint64_t>& word, std::uint64_t value, double deadline) {
  for (unsigned polls = 1; word.load(std::memory_order_acquire) != value; ++polls) {
    if (polls % 64 == 0 && now_seconds() > deadline) return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<NodeSlots> NodeSlots::connect(Bootstrap& bootstrap,
                                              const std::vector<int>& node_of_rank,
                                              bool oversubscribed) {
  const int me = bootstrap.rank();
  const bool enabled = env_integer("COLL_NODE_SLOTS", 0, 1).value_or(1) != 0;
  const auto on_my_node = std::count(node_of_rank.begin(), node_of_rank.end(), node_of_rank[me]);
  std::vector<int> nodes = node_of_rank;  // some node has two ranks: the same answer everywhere
  std::sort(nodes.begin(), nodes.end());
  const bool useful = std::adjacent_find(nodes.begin(), nodes.end()) != nodes.end();
  if (!enabled || !useful) return nullptr;
  auto segment = std::make_shared<SharedSegment>(
      SharedSegment::map_per_group(bootstrap, node_of_rank, "slots", bytes(int(on_my_node))));
  std::unique_ptr<NodeSlots> slots;
  long long handoff_ns = -1;
  if (segment->mapped()) {
    slots.reset(new NodeSlots(std::shared_ptr<void>(segment, segment->base()), node_of_rank, me));
    // The first communicator's buffers are touched now: a first touch of shared memory costs
    // tens of microseconds on some VMs, which would land in the first collectives.
    for (int which = 0; which < 2; ++which) {
      NodeSlots::Buffer& mine = slots->buffer(0, me, which);
      std::memset(static_cast<void*>(&mine), 0, sizeof mine);
    }
    const double seconds = slots->time_handoff(oversubscribed);
    if (seconds > 0) handoff_ns = std::llround(seconds * 1e9);
  } else {
    log_line(LogLevel::Info, me, "node slots: " + segment->failure());
  }
  // Every rank's "mapped" flag and timing: slots are used only where every rank mapped them.
  const auto rows = bootstrap.allgather(
      "slots/ready", std::string(slots ? "1 " : "0 ") + std::to_string(handoff_ns));
  std::vector<long long> timed;
  for (const std::string& row : rows) {
    if (row.empty() || row[0] != '1') return nullptr;
    const long long ns = std::atoll(row.c_str() + 2);
    if (ns > 0) timed.push_back(ns);
  }
  if (!timed.empty()) {
    std::sort(timed.begin(), timed.end());
    slots->handoff_seconds_ = double(timed[timed.size() / 2]) * 1e-9;
  }
  return slots;
}

std::size_t NodeSlots::bytes(int local_ranks) {
  return kProbeBytes +
         std::size_t(kContexts) * std::size_t(local_ranks) * stride() * sizeof(Buffer);
}

std::unique_ptr<NodeSlots> NodeSlots::in_process(std::shared_ptr<void> memory, int ranks, int me) {
  return std::unique_ptr<NodeSlots>(
      new NodeSlots(std::move(memory), std::vector<int>(static_cast<std::size_t>(ranks), 0), me));
}

// The memory arrives zeroed: every round, counter and probe starts at 0 without being written
// (a rank writing them here could reset what an earlier rank already uses).
NodeSlots::NodeSlots(std::shared_ptr<void> memory, std::vector<int> node_of_rank, int me)
    : memory_(std::move(memory)),
      first_buffer_(
          reinterpret_cast<Buffer*>(static_cast<std::byte*>(memory_.get()) + kProbeBytes)),
      node_of_rank_(std::move(node_of_rank)),
      local_index_(node_of_rank_.size()),
      me_(me) {
  std::vector<int> counts(node_of_rank_.size() + 1);
  for (std::size_t rank = 0; rank < node_of_rank_.size(); ++rank) {
    local_index_[rank] = counts[static_cast<std::size_t>(node_of_rank_[rank])]++;
  }
  local_ranks_ = counts[static_cast<std::size_t>(node_of_rank_[me])];
  static_assert(sizeof(Probe) <= kProbeBytes);
}

void NodeSlots::clear(unsigned context) {
  for (int which = 0; which < 2; ++which) {
    buffer(context, me_, which).round.store(0, std::memory_order_release);
  }
  rounds_[context] = 0;
}

// The node's first two ranks pass a counter back and forth; one hand-off is half the median
// round trip (the median: a round in which either rank lost its core says nothing of the line).
double NodeSlots::time_handoff(bool oversubscribed) {
  const int local = local_index_[me_];
  // Ranks sharing cores would time the scheduler, not the line (and the model prices their
  // rounds from its own measurement then).
  if (local > 1 || local_ranks_ < 2 || oversubscribed) return 0;
  auto& probe = *static_cast<Probe*>(memory_.get());
  const double deadline = now_seconds() + kHandoffBudgetSeconds;
  constexpr int kWarmRounds = 10;
  std::vector<double> round_trips;
  round_trips.reserve(kHandoffRounds);
  for (std::uint64_t round = 1; round <= kHandoffRounds + kWarmRounds; ++round) {
    if (local == 0) {
      const double sent = now_seconds();
      probe.ping.store(round, std::memory_order_release);
      if (!await_value(probe.pong, round, deadline)) return 0;
      if (round > kWarmRounds) round_trips.push_back(now_seconds() - sent);
    } else {
      if (!await_value(probe.ping, round, deadline)) return 0;
      probe.pong.store(round, std::memory_order_release);
    }
  }
  if (local != 0) return 0;
  std::nth_element(round_trips.begin(), round_trips.begin() + kHandoffRounds / 2,
                   round_trips.end());
  return round_trips[kHandoffRounds / 2] / 2;
}

}  // namespace coll
