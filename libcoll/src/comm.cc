// coll::Comm: bootstrap → node map → transport, then collectives over the whole group.
#include "coll/comm.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "algorithms/registry.hpp"
#include "algorithms/selector.hpp"
#include "argument_check.hpp"
#include "bootstrap/bootstrap.hpp"
#include "coll/buffer_pool.hpp"
#include "coll/topology/rank_map.hpp"
#include "comm_config.hpp"
#include "core/log.hpp"
#include "core/memory_type.hpp"
#include "core/progress_engine.hpp"
#include "model/resolve_params.hpp"
#include "schedule/fusion_buffer.hpp"
#include "transport/transport_registry.hpp"

namespace coll {

struct Comm::Impl {
  Config config;
  std::unique_ptr<Bootstrap> bootstrap;
  topo::RankMap rank_map;
  std::unique_ptr<Transport> transport;
  BufferPool pool;
  Group world;
  std::uint64_t sequence = 0;
  std::string broken;  // the first error; a failed communicator refuses further calls
  // Started by the first allreduce_async; from then on every transport call runs on its thread.
  std::unique_ptr<ProgressEngine> engine;
  // `auto`'s cost model, made on first use (a bad preset or calibration file fails only then).
  std::once_flag selector_made;
  std::unique_ptr<Selector> selector;

  Impl(Config configuration, std::unique_ptr<Bootstrap> boot)
      : config(std::move(configuration)), bootstrap(std::move(boot)) {
    build_rank_map();
    for (int r = 0; r < bootstrap->size(); ++r) world.ranks.push_back(r);
    world.me = bootstrap->rank();
    TransportOptions options;
    options.timeout_s = config.timeout_s;
    // Cores are shared by every rank of this host, emulated nodes included.
    const int host = rank_map.host_of_rank[static_cast<std::size_t>(world.me)];
    options.ranks_on_this_host = static_cast<int>(
        std::count(rank_map.host_of_rank.begin(), rank_map.host_of_rank.end(), host));
    log_line(LogLevel::Info, world.me, "transport '" + config.transport + "'");
    transport = make_transport(config.transport, *bootstrap, rank_map.node_of_rank, options);
    if (log_enabled(LogLevel::Info)) {
      log_line(LogLevel::Info, world.me,
               "communicator: " + std::to_string(world.size()) + " ranks on " +
                   std::to_string(rank_map.num_nodes()) + " node(s), node " +
                   std::to_string(rank_map.node_of_rank[static_cast<std::size_t>(world.me)]) +
                   ", bootstrap " + bootstrap->describe() + ", " + transport->describe() +
                   ", algorithm " + config.algorithm + ", timeout " +
                   std::to_string(config.timeout_s) + " s");
    }
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
    }
    rank_map = topo::build_rank_map(all);
  }

  std::string where() const { return "rank " + std::to_string(world.me) + ": "; }

  const Selector& cost_model();
  std::string resolve_algorithm(std::string_view algorithm, std::size_t bytes);
  void run_allreduce(const AllreduceArgs& args, const std::string& algorithm, std::uint64_t tag);
  template <typename Work>
  void serialized(Work&& work);

  void check_peer(int peer, const char* what) const {
    if (peer < 0 || peer >= world.size() || peer == world.me) {
      throw Error(Status::InvalidArgument,
                  where() + what + ": invalid peer rank " + std::to_string(peer));
    }
  }
};

Comm::Comm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Comm::~Comm() {
  impl_->engine.reset();  // runs what is still queued, then stops its thread
  // A barrier over the transport before tearing it down: a peer may still need this rank's
  // progress to complete its last sends (UCX rendezvous acknowledgements).
  if (impl_->broken.empty() && size() > 1) {
    try {
      barrier();
    } catch (const Error&) {
      // Already failing: the transport's forced close handles the rest.
    }
  }
}

std::unique_ptr<Comm> Comm::from_environment() {
  Config config = Config::from_environment();
  auto bootstrap = bootstrap_from_environment(config.timeout_s);
  return std::unique_ptr<Comm>(new Comm(std::make_unique<Impl>(config, std::move(bootstrap))));
}

std::unique_ptr<Comm> Comm::from_store(const std::string& address, const std::string& token,
                                       int rank, int size) {
  Config config = Config::from_environment();
  auto bootstrap = make_store_bootstrap(address, token, rank, size, config.timeout_s);
  return std::unique_ptr<Comm>(new Comm(std::make_unique<Impl>(config, std::move(bootstrap))));
}

int Comm::rank() const {
  return impl_->world.me;
}
int Comm::size() const {
  return impl_->world.size();
}
int Comm::node() const {
  return impl_->rank_map.node_of_rank[static_cast<std::size_t>(rank())];
}
int Comm::num_nodes() const {
  return impl_->rank_map.num_nodes();
}
int Comm::local_rank() const {
  return impl_->rank_map.local_rank[static_cast<std::size_t>(rank())];
}
const std::vector<int>& Comm::node_of_rank() const {
  return impl_->rank_map.node_of_rank;
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
         impl_->bootstrap->describe() + ", " + impl_->transport->describe();
}

namespace {

void validate(const std::string& where, const void* send, const void* recv, std::size_t count,
              DataType type, ReduceOp op) {
  if (static_cast<unsigned>(type) >= kNumDataTypes || static_cast<unsigned>(op) >= kNumReduceOps) {
    throw Error(Status::InvalidArgument, where + "allreduce: invalid data type " +
                                             std::to_string(int(type)) + " or operation " +
                                             std::to_string(int(op)));
  }
  if (count > 0 && (send == nullptr || recv == nullptr)) {
    throw Error(Status::InvalidArgument,
                where + "allreduce: null buffer with count " + std::to_string(count));
  }
}

AllreduceArgs describe_buffers(const void* send, void* recv, std::size_t count, DataType type,
                               ReduceOp op) {
  return {send,
          recv,
          count,
          type,
          op,
          memory_type_of(send),
          recv == send ? memory_type_of(send) : memory_type_of(recv)};
}

// Point-to-point messages and fused tensors are copied by the CPU: host memory only.
void require_host(const std::string& where, const void* data, const char* what) {
  if (memory_type_of(data) == MemoryType::Device) {
    throw Error(Status::InvalidArgument,
                where + "device memory is not supported by " + what + " yet: pass host buffers");
  }
}

}  // namespace

std::string Comm::Impl::resolve_algorithm(std::string_view algorithm, std::size_t bytes) {
  const std::string name(algorithm.empty() ? std::string_view(config.algorithm) : algorithm);
  return name == "auto" ? cost_model().choose(bytes) : name;
}

std::string Comm::resolve_algorithm(std::string_view algorithm, std::size_t bytes) const {
  return impl_->resolve_algorithm(algorithm, bytes);
}

// Per communicator: its node map and tuning enter the formulas, and the parameters are read once.
const Selector& Comm::Impl::cost_model() {
  std::call_once(selector_made, [this] {
    selector =
        std::make_unique<Selector>(model::resolve_params(), rank_map.node_of_rank, config.tuning);
  });
  return *selector;
}

const Selector& Comm::selector() const {
  return impl_->cost_model();
}

const Tuning& Comm::tuning() const {
  return impl_->config.tuning;
}

void Comm::Impl::run_allreduce(const AllreduceArgs& args, const std::string& algorithm,
                               std::uint64_t tag) {
  if (!broken.empty()) {
    throw Error(Status::InvalidUsage,
                where() + "communicator unusable after an earlier error: " + broken);
  }
  // Every rank must pick the same; the argument check below compares the resolved names, so a
  // disagreement fails loudly.
  const std::string name = resolve_algorithm(algorithm, args.count * dtype_size(args.type));
  const AlgorithmInfo* info = find_algorithm(name);
  if (info == nullptr || !is_available(*info)) {
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
  const std::uint64_t this_sequence = ++sequence;
  const CallDescriptor call = CallDescriptor::make(this_sequence, args, info->name, tag);
  try {
    if (config.check_arguments && world.size() > 1) {
      check_same_call(*transport, world, TagSpace(this_sequence, 15), call);
    }
    const CollectiveContext context{
        *transport, pool, world, rank_map.node_of_rank, TagSpace(this_sequence, 0), config.tuning};
    info->run(context, args);
  } catch (const Error& error) {
    broken = call.describe() + ": " + error.what();
    throw Error(error.status(), where() + broken);
  }
}

// Runs `work` on the engine's thread when the engine runs (UCX is then used from that thread
// only), else here.
template <typename Work>
void Comm::Impl::serialized(Work&& work) {
  if (engine && !engine->on_engine_thread()) {
    engine->submit(std::forward<Work>(work))->wait();
  } else {
    work();
  }
}

void Comm::allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                     std::string_view algorithm) {
  Impl& impl = *impl_;
  validate(impl.where(), send, recv, count, type, op);
  const AllreduceArgs args = describe_buffers(send, recv, count, type, op);
  impl.serialized(
      [&impl, args, name = std::string(algorithm)] { impl.run_allreduce(args, name, 0); });
}

Request Comm::allreduce_async(const void* send, void* recv, std::size_t count, DataType type,
                              ReduceOp op, std::string_view algorithm, std::uint64_t tag) {
  Impl& impl = *impl_;
  validate(impl.where(), send, recv, count, type, op);
  if (!impl.engine) impl.engine = std::make_unique<ProgressEngine>();
  const AllreduceArgs args = describe_buffers(send, recv, count, type, op);
  return Request(impl.engine->submit(
      [&impl, args, name = std::string(algorithm), tag] { impl.run_allreduce(args, name, tag); }));
}

Request Comm::allreduce_fused_async(std::span<const Tensor> tensors, ReduceOp op,
                                    std::string_view algorithm, std::uint64_t tag) {
  Impl& impl = *impl_;
  // Validated now, so bad input fails in the caller, not later on the engine.
  for (const Tensor& tensor : tensors) require_host(impl.where(), tensor.data, "fused all-reduce");
  const auto fused = std::make_shared<schedule::FusionBuffer>(impl.pool, tensors);
  validate(impl.where(), fused->data(), fused->data(), fused->count(), fused->type(), op);
  if (!impl.engine) impl.engine = std::make_unique<ProgressEngine>();
  return Request(impl.engine->submit([&impl, fused, op, name = std::string(algorithm), tag] {
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
    auto request =
        impl.transport->send(peer, TagSpace::point_to_point().make(rank(), tag), data, bytes);
    impl.transport->wait(request);
  });
}

void Comm::recv(void* data, std::size_t bytes, int peer, std::uint32_t tag) {
  Impl& impl = *impl_;
  impl.check_peer(peer, "recv");
  require_host(impl.where(), data, "recv");
  impl.serialized([&] {
    auto request =
        impl.transport->recv(peer, TagSpace::point_to_point().make(peer, tag), data, bytes);
    impl.transport->wait(request);
  });
}

// Over the transport, not the bootstrap store: waiting in the store would stop this rank from
// progressing UCX, and a peer still completing a rendezvous send to it would wait forever.
void Comm::barrier() {
  std::uint8_t token = 0;
  allreduce(&token, &token, 1, DataType::Uint8, ReduceOp::Max, "ring");
}

}  // namespace coll
