// coll::Comm: making a communicator (from the environment, a store or an exchange, or by
// splitting one), tearing it down, and what it says about itself. Its calls are in
// comm_allreduce.cc and comm_collectives.cc, the choice of algorithm in
// comm_algorithm_resolution.cc.
#include "coll/comm.hpp"

#include <algorithm>
#include <map>

#include "bootstrap/bootstrap.hpp"
#include "coll/coll.h"
#include "coll/config.hpp"
#include "collectives/collectives.hpp"
#include "collectives/context_ids.hpp"
#include "comm_impl.hpp"
#include "transport/node_slots.hpp"

namespace coll {

Comm::Impl::Impl(std::shared_ptr<CommFamily> shared, Group members, unsigned tag_context)
    : family(std::move(shared)),
      config(family->config),
      transport(*family->transport),
      pool(family->pool),
      world(std::move(members)),
      context(tag_context),
      rank_prefix("rank " + std::to_string(world.me) + ": ") {
  std::map<int, int> dense;
  for (const int rank : world.ranks) {
    const int node = family->rank_map.node_of_rank[static_cast<std::size_t>(rank)];
    node_of_member.push_back(dense.emplace(node, static_cast<int>(dense.size())).first->second);
  }
}

std::unique_ptr<Comm::Impl> Comm::Impl::whole(std::shared_ptr<CommFamily> shared) {
  Group all;
  for (int r = 0; r < shared->bootstrap->size(); ++r) all.ranks.push_back(r);
  all.me = shared->bootstrap->rank();
  return std::make_unique<Impl>(std::move(shared), std::move(all), 0);
}

Comm::Comm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Comm::~Comm() {
  Impl& impl = *impl_;
  // Let what this communicator queued run (the engine is shared with split communicators).
  if (impl.family->engine) impl.family->engine->submit([] {})->wait();
  // A barrier over the transport before tearing it down: a peer may still need this rank's
  // progress to complete its last sends (UCX rendezvous acknowledgements).
  if (impl.broken.empty() && size() > 1 && !impl.transport.failed()) {
    try {
      barrier();
    } catch (const Error&) {
      // Already failing: the transport's forced close handles the rest.
    }
  }
  // Every peer has passed the barrier, so none reads this rank's slots any more.
  if (NodeSlots* slots = impl.family->node.node_slots.get();
      slots && impl.context < NodeSlots::kContexts)
    slots->clear(impl.context);
  impl.family->contexts.release(impl.context);
}

std::unique_ptr<Comm> Comm::from_environment() {
  return from_environment(Config::from_environment());
}

std::unique_ptr<Comm> Comm::from_environment(const Config& config) {
  auto bootstrap = bootstrap_from_environment(config.timeout_s);
  return std::unique_ptr<Comm>(
      new Comm(Impl::whole(std::make_shared<CommFamily>(config, std::move(bootstrap)))));
}

std::unique_ptr<Comm> Comm::from_store(const std::string& address, const std::string& token,
                                       int rank, int size) {
  Config config = Config::from_environment();
  auto bootstrap = make_store_bootstrap(address, token, rank, size, config.timeout_s);
  return std::unique_ptr<Comm>(
      new Comm(Impl::whole(std::make_shared<CommFamily>(config, std::move(bootstrap)))));
}

std::unique_ptr<Comm> Comm::from_exchange(int rank, int size, std::unique_ptr<Exchange> exchange) {
  return from_exchange(rank, size, std::move(exchange), Config::from_environment());
}

std::unique_ptr<Comm> Comm::from_exchange(int rank, int size, std::unique_ptr<Exchange> exchange,
                                          const Config& config) {
  auto bootstrap = make_exchange_bootstrap(rank, size, std::move(exchange));
  return std::unique_ptr<Comm>(
      new Comm(Impl::whole(std::make_shared<CommFamily>(config, std::move(bootstrap)))));
}

std::unique_ptr<Comm> Comm::split(int color, int key) {
  Impl& impl = *impl_;
  // What every rank tells the others: its color and key, and the tag contexts it uses.
  struct SplitEntry {
    std::int32_t color;
    std::int32_t key;
    ContextIds::Mask contexts;
  };
  const SplitEntry mine{std::max(color, kSplitNoColor), key, impl.family->contexts.in_use()};
  std::vector<SplitEntry> all(static_cast<std::size_t>(size()));
  impl.serialized([&] {
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::Split, sizeof mine, DataType::Uint8, -1, -1, "ring"),
        [&](const CollectiveContext& collective) {
          ring_allgather(collective, &mine, all.data(), sizeof mine, DataType::Uint8);
        });
  });
  ContextIds::Mask used{};
  for (const SplitEntry& request : all) {
    for (std::size_t word = 0; word < used.size(); ++word) used[word] |= request.contexts[word];
  }
  const unsigned context = ContextIds::lowest_free(used);
  if (mine.color == kSplitNoColor) return nullptr;

  std::vector<int> members;  // ranks of this communicator, in the new one's order
  for (int r = 0; r < size(); ++r) {
    if (all[static_cast<std::size_t>(r)].color == mine.color) members.push_back(r);
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
  });
  Group group;
  for (const int member : members) {
    if (member == rank()) group.me = group.size();
    group.ranks.push_back(impl.world.global(member));
  }
  impl.family->contexts.take(context);
  return std::unique_ptr<Comm>(new Comm(std::make_unique<Impl>(impl.family, group, context)));
}

void Comm::abort() {
  impl_->transport.interrupt("the communicator was aborted (Comm::abort or collCommAbort)");
}

int Comm::rank() const {
  return impl_->world.me;
}
int Comm::size() const {
  return impl_->world.size();
}
int Comm::node() const {
  return impl_->node_of_member[static_cast<std::size_t>(rank())];
}
int Comm::num_nodes() const {
  const auto& nodes = impl_->node_of_member;
  return nodes.empty() ? 0 : *std::max_element(nodes.begin(), nodes.end()) + 1;
}
int Comm::local_rank() const {
  const auto& nodes = impl_->node_of_member;
  return static_cast<int>(std::count(nodes.begin(), nodes.begin() + rank(), node()));
}
const std::vector<int>& Comm::node_of_rank() const {
  return impl_->node_of_member;
}

std::string Comm::describe() const {
  return "rank " + std::to_string(rank()) + "/" + std::to_string(size()) + " on node " +
         std::to_string(node()) + " of " + std::to_string(num_nodes()) + ", bootstrap " +
         impl_->family->bootstrap->describe() + ", " + impl_->family->links_text() +
         (impl_->context != 0 ? ", split (tag context " + std::to_string(impl_->context) + ")"
                              : "");
}

const Tuning& Comm::tuning() const {
  return impl_->config.tuning;
}

std::string Comm::version() {
  return std::to_string(COLL_MAJOR) + "." + std::to_string(COLL_MINOR) + "." +
         std::to_string(COLL_PATCH);
}

}  // namespace coll
