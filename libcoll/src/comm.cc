// coll::Comm: bootstrap → node map → transport, then collectives over the whole group.
#include "coll/comm.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "algorithms/registry.hpp"
#include "argument_check.hpp"
#include "bootstrap/bootstrap.hpp"
#include "coll/buffer_pool.hpp"
#include "coll/config.hpp"
#include "coll/model/resolve_params.hpp"
#include "coll/selector.hpp"
#include "coll/topology/rank_map.hpp"
#include "collectives/collectives.hpp"
#include "collectives/context_ids.hpp"
#include "core/argument_validation.hpp"
#include "core/log.hpp"
#include "core/memory_type.hpp"
#include "core/progress_engine.hpp"
#include "core/shared_regions.hpp"
#include "core/usable_cpus.hpp"
#include "schedule/fusion_buffer.hpp"
#include "transport/node_slots.hpp"
#include "transport/transport_registry.hpp"

namespace coll {

// What communicators split from one another share: the transport (UCX is used from one thread
// at a time, so also the progress engine), what the ranks of a node share besides messages, the
// bootstrap and node map, the staging pool, and the tag contexts that keep their messages apart.
struct CommFamily {
  Config config;
  std::unique_ptr<Bootstrap> bootstrap;
  topo::RankMap rank_map;
  std::vector<std::string> kernel_of_rank;  // the boot and machine ids in its host identity
  std::vector<std::string> host_name_of_rank;
  std::unique_ptr<Transport> transport;
  NodeResources node;
  bool emulated_links = false;  // the transport emulates the links between nodes
  BufferPool pool;
  ContextIds contexts;
  // Started by the first asynchronous call; from then on every transport call runs on its
  // thread. Declared last: it stops (running what is queued) before the transport goes.
  std::unique_ptr<ProgressEngine> engine;
  // After a failure the job's peers may be gone or cut off: a bootstrap that would wait for them
  // as it closes (MPI_Finalize) is told not to.
  ~CommFamily() {
    engine.reset();
    if (transport && transport->failed()) bootstrap->abandon();
  }

  CommFamily(Config configuration, std::unique_ptr<Bootstrap> boot)
      : config(std::move(configuration)), bootstrap(std::move(boot)) {
    build_rank_map();
    const int me = bootstrap->rank();
    TransportOptions options;
    options.timeout_s = config.timeout_s;
    // Cores are shared by every rank of this kernel: emulated nodes, and emulated hosts or
    // containers with hostnames of their own.
    options.ranks_on_this_host = ranks_sharing_kernel(me);
    options.host_of_rank = rank_map.host_of_rank;
    if (options.spans_hosts()) options.host_name_of_rank = host_name_of_rank;
    log_line(LogLevel::Info, me, "transport '" + config.transport + "'");
    Connection connection =
        make_transport(config.transport, *bootstrap, rank_map.node_of_rank, options);
    transport = std::move(connection.transport);
    node = std::move(connection.node);
    emulated_links = connection.emulated_links;
    if (log_enabled(LogLevel::Info)) {
      log_line(LogLevel::Info, me,
               "communicator: " + std::to_string(bootstrap->size()) + " ranks on " +
                   std::to_string(rank_map.num_nodes()) + " node(s), node " +
                   std::to_string(rank_map.node_of_rank[static_cast<std::size_t>(me)]) +
                   ", bootstrap " + bootstrap->describe() + ", " + links_text() + ", algorithm " +
                   config.algorithm + ", timeout " + std::to_string(config.timeout_s) + " s");
    }
  }

  int ranks_sharing_kernel(int rank) const {
    return static_cast<int>(std::count(kernel_of_rank.begin(), kernel_of_rank.end(),
                                       kernel_of_rank[static_cast<std::size_t>(rank)]));
  }

  // The transport's links and what the node shares: "ucx: 1 peer(s) over sm,self, 2 over tcp
  // sockets(lo), send buffer 256K; cross-memory reads from 1 peer(s); node slots".
  std::string links_text() const {
    std::string text = transport->describe();
    const int me = bootstrap->rank();
    int readable = 0;
    for (int peer = 0; node.peer_memory && peer < bootstrap->size(); ++peer)
      readable += peer != me && node.peer_memory->connects(me, peer);
    if (readable > 0) text += "; cross-memory reads from " + std::to_string(readable) + " peer(s)";
    if (node.node_slots) text += "; node slots";
    return text;
  }

  // Every rank publishes its host and COLL_NODE; nodes are (host, COLL_NODE) pairs, so one
  // machine can emulate several nodes but two machines never form one.
  void build_rank_map() {
    topo::RankInfo mine;
    mine.rank = bootstrap->rank();
    mine.host_identity = topo::local_host_identity();
    mine.node_override = config.node.value_or(-1);
    mine.process_id = topo::this_process_id();
    std::vector<topo::RankInfo> all;
    for (const auto& text : bootstrap->allgather("rank-info", mine.serialize())) {
      all.push_back(topo::RankInfo::deserialize(text));
      const std::string& host = all.back().host_identity;
      kernel_of_rank.push_back(host.substr(std::min(host.find('/'), host.size())));
      host_name_of_rank.push_back(host.substr(0, host.find('/')));
    }
    rank_map = topo::build_rank_map(all);
  }
};

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

  Impl(std::shared_ptr<CommFamily> shared, Group members, unsigned tag_context)
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
  // The communicator of every rank of a new family.
  static std::unique_ptr<Impl> whole(std::shared_ptr<CommFamily> shared) {
    Group all;
    for (int r = 0; r < shared->bootstrap->size(); ++r) all.ranks.push_back(r);
    all.me = shared->bootstrap->rank();
    return std::make_unique<Impl>(std::move(shared), std::move(all), 0);
  }

  const std::string& where() const { return rank_prefix; }

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
  void run_allreduce(const AllreduceArgs& args, std::string_view algorithm, std::uint64_t tag);
  // Checks the call with the other ranks and runs `body` as collective number `sequence + 1`;
  // `algorithm` (null: one that takes no part in the check) says whether it carries the check in
  // its first message, compares every rank's descriptor itself, and asks the cost model.
  template <typename Body>
  void run_collective(CallDescriptor call, Body&& body, const AlgorithmInfo* algorithm = nullptr);
  template <typename Work>
  void serialized(Work&& work);
  ProgressEngine& engine() {
    if (!family->engine) family->engine = std::make_unique<ProgressEngine>();
    return *family->engine;
  }

  void check_peer(int peer, const char* what) const {
    if (peer < 0 || peer >= world.size() || peer == world.me) {
      throw Error(Status::InvalidArgument,
                  where() + what + ": invalid peer rank " + std::to_string(peer));
    }
  }
};

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
  auto bootstrap = make_exchange_bootstrap(rank, size, std::move(exchange));
  return std::unique_ptr<Comm>(new Comm(
      Impl::whole(std::make_shared<CommFamily>(Config::from_environment(), std::move(bootstrap)))));
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

std::vector<std::string> Comm::algorithms() {
  std::vector<std::string> names;
  for (const auto& info : allreduce_algorithms()) {
    if (is_available(info)) names.emplace_back(info.name);
  }
  return names;
}

std::string Comm::describe() const {
  return "rank " + std::to_string(rank()) + "/" + std::to_string(size()) + " on node " +
         std::to_string(node()) + " of " + std::to_string(num_nodes()) + ", bootstrap " +
         impl_->family->bootstrap->describe() + ", " + impl_->family->links_text() +
         (impl_->context != 0 ? ", split (tag context " + std::to_string(impl_->context) + ")"
                              : "");
}

namespace {

AllreduceArgs describe_buffers(const void* send, void* recv, std::size_t count, DataType type,
                               ReduceOp op) {
  const auto [send_memory, recv_memory] = memory_types_of(send, recv);
  return {send, recv, count, type, op, send_memory, recv_memory};
}

}  // namespace

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
      params.nic_shared = false;
      params.source += "; nodes emulated on one host: no NIC shared";
    }
    if (PeerMemory* memory = family->node.peer_memory.get()) {
      params.peer_read_call_s = memory->read_call_seconds();
    } else {
      params.peer_memory = false;
    }
    // Not timed: a hand-off is priced like a message's latency.
    if (NodeSlots* slots = family->node.node_slots.get()) {
      params.slot_handoff_s =
          slots->handoff_seconds() > 0 ? slots->handoff_seconds() : params.intra.alpha_s;
      params.peer_line_s = slots->handoff_seconds();
    }
    selector = std::make_unique<Selector>(params, node_of_member, config.tuning,
                                          std::move(decisions), path, ranks_per_core);
  });
  return *selector;
}

const Selector& Comm::selector() const {
  return impl_->cost_model();
}

const Tuning& Comm::tuning() const {
  return impl_->config.tuning;
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

void Comm::Impl::run_allreduce(const AllreduceArgs& args, std::string_view algorithm,
                               std::uint64_t tag) {
  if (!broken.empty()) {
    throw Error(Status::InvalidUsage,
                where() + "communicator unusable after an earlier error: " + broken);
  }
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
  const AlgorithmInfo* info =
      mapped != plain && shared_region_of(args.send, bytes) && shared_region_of(args.recv, bytes)
          ? mapped
          : plain;
  try {
    check_memory_supported(*info, args);
  } catch (const Error& error) {
    throw Error(error.status(), where() + error.what());  // refused before any peer is involved
  }
  if (log_enabled(LogLevel::Trace)) {
    log_line(LogLevel::Trace, world.me,
             "allreduce #" + std::to_string(sequence + 1) + ": " + std::to_string(args.count) +
                 " x " + std::string(dtype_name(args.type)) + " " + std::string(op_name(args.op)) +
                 " with " + std::string(info->name) +
                 (algorithm.empty() && config.algorithm == "auto" ? " (auto)" : ""));
  }
  run_collective(
      CallDescriptor::make(0, args, info->name, tag),
      [&](const CollectiveContext& collective) { info->run(collective, args); }, info);
}

template <typename Body>
void Comm::Impl::run_collective(CallDescriptor call, Body&& body, const AlgorithmInfo* algorithm) {
  const bool carries_check = algorithm != nullptr && algorithm->carries_call_check;
  const bool compares_calls = algorithm != nullptr && algorithm->compares_calls;
  if (!broken.empty()) {
    throw Error(Status::InvalidUsage,
                where() + "communicator unusable after an earlier error: " + broken);
  }
  call.sequence = ++sequence;
  try {
    transport.check_interrupt();
    std::optional<NeighbourCheck> check;
    if (config.tuning.check_arguments && world.size() > 1) {
      if (!check_buffers) check_buffers.emplace(pool);
      check.emplace(transport, *check_buffers, world, TagSpace(call.sequence, 15, context), call,
                    compares_calls);
      if (!carries_check) check->complete();  // a round of its own, before the collective
    }
    const CollectiveContext on_world{
        transport,
        pool,
        world,
        family->rank_map.node_of_rank,
        TagSpace(call.sequence, 0, context),
        config.tuning,
        carries_check && check ? &*check : nullptr,
        algorithm && algorithm->asks_cost_model ? &cost_model() : nullptr,
        &family->node};
    body(on_world);
    if (check) check->complete();
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

void Comm::allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                     std::string_view algorithm) {
  Impl& impl = *impl_;
  validate_allreduce(impl.where(), send, recv, count, type, op);
  const AllreduceArgs args = describe_buffers(send, recv, count, type, op);
  // Blocking: the name outlives the call, and it runs no later than it returns.
  impl.serialized([&impl, args, algorithm] { impl.run_allreduce(args, algorithm, 0); });
}

Request Comm::allreduce_async(const void* send, void* recv, std::size_t count, DataType type,
                              ReduceOp op, std::string_view algorithm, std::uint64_t tag) {
  Impl& impl = *impl_;
  validate_allreduce(impl.where(), send, recv, count, type, op);
  const AllreduceArgs args = describe_buffers(send, recv, count, type, op);
  return Request(impl.engine().submit(
      [&impl, args, name = std::string(algorithm), tag] { impl.run_allreduce(args, name, tag); }));
}

Request Comm::allreduce_fused_async(std::span<const Tensor> tensors, ReduceOp op,
                                    std::string_view algorithm, std::uint64_t tag) {
  Impl& impl = *impl_;
  // Validated now, so bad input fails in the caller, not later on the engine.
  for (const Tensor& tensor : tensors) require_host(impl.where(), tensor.data, "fused all-reduce");
  const auto fused = std::make_shared<schedule::FusionBuffer>(impl.pool, tensors);
  validate_allreduce(impl.where(), fused->data(), fused->data(), fused->count(), fused->type(), op);
  return Request(impl.engine().submit([&impl, fused, op, name = std::string(algorithm), tag] {
    fused->pack();
    impl.run_allreduce({fused->data(), fused->data(), fused->count(), fused->type(), op}, name,
                       tag);
    fused->unpack();
  }));
}

bool Request::test() {
  if (!completion_) throw Error(Status::InvalidUsage, "test() on an empty coll::Request");
  return completion_->test();
}

double Request::started_at() const {
  return completion_ ? completion_->times().first : 0;
}
double Request::finished_at() const {
  return completion_ ? completion_->times().second : 0;
}

void Request::wait() {
  if (!completion_) throw Error(Status::InvalidUsage, "wait() on an empty coll::Request");
  completion_->wait();
}

void Comm::send(const void* data, std::size_t bytes, int peer, std::uint32_t tag) {
  Impl& impl = *impl_;
  impl.check_peer(peer, "send");
  require_host(impl.where(), data, "send");
  impl.serialized([&] {
    auto request = impl.transport.send(
        impl.world.global(peer),
        TagSpace::point_to_point(impl.context).make(impl.world.global(impl.world.me), tag), data,
        bytes);
    impl.transport.wait(request);
  });
}

void Comm::recv(void* data, std::size_t bytes, int peer, std::uint32_t tag) {
  Impl& impl = *impl_;
  impl.check_peer(peer, "recv");
  require_host(impl.where(), data, "recv");
  impl.serialized([&] {
    auto request = impl.transport.recv(
        impl.world.global(peer),
        TagSpace::point_to_point(impl.context).make(impl.world.global(peer), tag), data, bytes);
    impl.transport.wait(request);
  });
}

// Over the transport, not the bootstrap store: waiting in the store would stop this rank from
// progressing UCX, and a peer still completing a rendezvous send to it would wait forever.
// Its own kind in the call descriptor (a one-byte all-reduce on another rank is a mismatch), run by
// direct: one step, the argument check carried in it.
void Comm::barrier() {
  Impl& impl = *impl_;
  impl.serialized([&impl] {
    std::uint8_t token = 0;
    const AllreduceArgs args = describe_buffers(&token, &token, 1, DataType::Uint8, ReduceOp::Max);
    const AlgorithmInfo& direct = *find_algorithm("direct");
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::Barrier, 0, DataType::Uint8, -1, -1, direct.name),
        [&](const CollectiveContext& collective) { direct.run(collective, args); }, &direct);
  });
}

void Comm::broadcast(const void* send, void* recv, std::size_t count, DataType type, int root) {
  Impl& impl = *impl_;
  check_type(impl.where(), "broadcast", type);
  check_count(impl.where(), "broadcast", count, type);
  check_root(impl.where(), "broadcast", root, size());
  if (rank() == root) check_buffer(impl.where(), "broadcast", send, count);
  check_buffer(impl.where(), "broadcast", recv, count);
  require_host(impl.where(), recv, "broadcast");
  impl.serialized([&] {
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::Broadcast, count, type, -1, root, "chain"),
        [&](const CollectiveContext& collective) {
          if (rank() == root && send != recv && count > 0) {
            std::memcpy(recv, send, count * dtype_size(type));
          }
          chain_broadcast(collective, recv, count, type, root);
        });
  });
}

void Comm::reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                  int root) {
  Impl& impl = *impl_;
  check_type(impl.where(), "reduce", type);
  check_op(impl.where(), "reduce", op);
  check_count(impl.where(), "reduce", count, type);
  check_root(impl.where(), "reduce", root, size());
  check_buffer(impl.where(), "reduce", send, count);
  require_host(impl.where(), send, "reduce");
  if (rank() == root) check_buffer(impl.where(), "reduce", recv, count);
  impl.serialized([&] {
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::Reduce, count, type, int(op), root, "chain"),
        [&](const CollectiveContext& collective) {
          chain_reduce(collective, send, recv, count, type, op, root);
        });
  });
}

void Comm::allgather(const void* send, void* recv, std::size_t count, DataType type) {
  Impl& impl = *impl_;
  check_type(impl.where(), "allgather", type);
  check_count(impl.where(), "allgather", count, type, static_cast<std::size_t>(size()));
  check_buffer(impl.where(), "allgather", send, count);
  check_buffer(impl.where(), "allgather", recv, count);
  require_host(impl.where(), send, "allgather");
  require_host(impl.where(), recv, "allgather");
  impl.serialized([&] {
    impl.run_collective(CallDescriptor::of(CollectiveKind::AllGather, count, type, -1, -1, "ring"),
                        [&](const CollectiveContext& collective) {
                          ring_allgather(collective, send, recv, count, type);
                        });
  });
}

void Comm::reduce_scatter(const void* send, void* recv, std::size_t count, DataType type,
                          ReduceOp op) {
  Impl& impl = *impl_;
  check_type(impl.where(), "reduce_scatter", type);
  check_op(impl.where(), "reduce_scatter", op);
  check_count(impl.where(), "reduce_scatter", count, type, static_cast<std::size_t>(size()));
  check_buffer(impl.where(), "reduce_scatter", send, count);
  check_buffer(impl.where(), "reduce_scatter", recv, count);
  require_host(impl.where(), send, "reduce_scatter");
  require_host(impl.where(), recv, "reduce_scatter");
  impl.serialized([&] {
    impl.run_collective(
        CallDescriptor::of(CollectiveKind::ReduceScatter, count, type, int(op), -1, "ring"),
        [&](const CollectiveContext& collective) {
          ring_reduce_scatter_to(collective, send, recv, count, type, op);
        });
  });
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

std::string Comm::version() {
  return std::to_string(COLL_MAJOR) + "." + std::to_string(COLL_MINOR) + "." +
         std::to_string(COLL_PATCH);
}

}  // namespace coll
