// Which all-reduce algorithm a call runs: the name asked for (or COLL_ALGO), or for `auto` the
// communicator's cost model (a measured decision table first, then the formulas), through a
// cache of the last few names and sizes asked for.
#include <algorithm>
#include <optional>

#include "coll/comm.hpp"
#include "coll/model/resolve_params.hpp"
#include "comm_impl.hpp"
#include "core/shared_regions.hpp"
#include "core/usable_cpus.hpp"
#include "transport/node_slots.hpp"

namespace coll {

std::vector<std::string> Comm::algorithms() {
  std::vector<std::string> names;
  for (const auto& info : allreduce_algorithms()) {
    if (is_available(info)) names.emplace_back(info.name);
  }
  return names;
}

std::string Comm::Impl::resolve_algorithm(std::string_view algorithm, std::size_t bytes,
                                          bool buffers_mapped, bool in_place) {
  const std::string name = asked_name(algorithm);
  return name == "auto" ? cost_model().choose(bytes, buffers_mapped, in_place) : name;
}

std::string Comm::resolve_algorithm(std::string_view algorithm, std::size_t bytes,
                                    bool buffers_mapped, bool in_place) const {
  return impl_->resolve_algorithm(algorithm, bytes, buffers_mapped, in_place);
}

// Per communicator: its node map and tuning enter the formulas, and the parameters are read once.
// A measured decision table (COLL_TUNING_FILE) comes before the formulas, and the formulas know
// how many ranks share each core of the busiest host (the same count on every rank, so every
// rank makes the same choice on identical hosts).
const Selector& Comm::Impl::cost_model() {
  std::call_once(selector_made, [this] {
    std::vector<std::string> known;
    for (const auto& info : allreduce_algorithms()) known.emplace_back(info.name);
    const std::string path = model::decision_table_path();
    auto decisions = path.empty() ? std::nullopt : model::load_decision_table(path, known);
    const auto& hosts = family->rank_map.host_of_rank;
    long busiest = 0;
    for (int rank = 0; rank < static_cast<int>(hosts.size()); ++rank)
      busiest = std::max(busiest, long(family->ranks_sharing_kernel(rank)));
    // Links a transport emulates belong to a cluster with a core (a GPU) per rank: this host's
    // cores, which the ranks share, do not enter their prices.
    const double ranks_per_core =
        family->emulated_links ? 1.0 : double(busiest) / double(usable_cpus());
    model::CostParams params =
        model::resolve_params(family->config.cost_preset, "COLL_COST_PRESET");
    // Nodes emulated on one host talk over loopback: no NIC for their flows to share.
    if (busiest == long(hosts.size()) && family->rank_map.num_nodes() > 1 &&
        !family->emulated_links) {
      params.transport.nic_shared = false;
      params.source += "; nodes emulated on one host: no NIC shared";
    }
    if (PeerMemory* memory = family->node.peer_memory.get()) {
      params.transport.peer_read_call_s = memory->read_call_seconds();
    } else {
      params.transport.peer_memory = false;
    }
    // Not timed: a hand-off is priced like a message's latency.
    if (NodeSlots* slots = family->node.node_slots.get()) {
      params.transport.slot_handoff_s =
          slots->handoff_seconds() > 0 ? slots->handoff_seconds() : params.intra.alpha_s;
      params.transport.peer_line_s = slots->handoff_seconds();
    }
    selector = std::make_unique<Selector>(params, node_of_member, config.tuning,
                                          std::move(decisions), path, ranks_per_core);
  });
  return *selector;
}

const Selector& Comm::selector() const {
  return impl_->cost_model();
}

// "auto": the cost model's pick for this size on this node map. Every rank must pick the same;
// the argument check compares the resolved names, so a disagreement fails loudly.
ResolvedAlgorithm Comm::Impl::resolve_available(std::string_view algorithm, std::size_t bytes) {
  const std::string name = asked_name(algorithm);
  if (name != "auto") {
    const AlgorithmInfo* info = available(name);
    return {info, info, info, info};
  }
  const Selector::Choice choice = cost_model().choose_for_buffers(bytes);
  return {available(choice.plain), available(choice.mapped), available(choice.plain_in_place),
          available(choice.mapped_in_place)};
}

const AlgorithmInfo* Comm::Impl::available(const std::string& name) {
  const AlgorithmInfo* info = find_algorithm(name);
  if (info != nullptr && is_available(*info)) return info;
  std::string known;
  for (const auto& candidate : Comm::algorithms()) {
    known += (known.empty() ? "" : ", ") + candidate;
  }
  throw Error(Status::InvalidArgument,
              where() +
                  (info ? "all-reduce algorithm '" + name + "' is not available in this process ("
                        : "unknown all-reduce algorithm '" + name + "' (") +
                  "available: " + known + ")");
}

const AlgorithmInfo& Comm::Impl::algorithm_for(const AllreduceArgs& args,
                                               std::string_view algorithm) {
  const std::size_t bytes = args.count * dtype_size(args.type);
  auto found = std::find_if(
      recently_resolved.begin(), recently_resolved.end(), [&](const RecentlyResolved& entry) {
        return entry.resolved.plain != nullptr && entry.bytes == bytes && entry.asked == algorithm;
      });
  if (found == recently_resolved.end()) {
    found = recently_resolved.begin() + next_to_replace;
    next_to_replace = (next_to_replace + 1) % recently_resolved.size();
    *found = {std::string(algorithm), bytes, resolve_available(algorithm, bytes)};
  }
  const ResolvedAlgorithm& resolved = found->resolved;
  const bool in_place = args.send == args.recv;
  const AlgorithmInfo* plain = in_place ? resolved.plain_in_place : resolved.plain;
  const AlgorithmInfo* mapped = in_place ? resolved.mapped_in_place : resolved.mapped;
  // Looked up only where the choice depends on it: small sizes pay nothing.
  return mapped != plain && shared_region_of(args.send, bytes) && shared_region_of(args.recv, bytes)
             ? *mapped
             : *plain;
}

}  // namespace coll
