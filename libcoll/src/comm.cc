// coll::Comm: bootstrap → node map → transport, then collectives over the whole group.
#include "coll/comm.hpp"

#include <algorithm>
#include <map>

#include "algorithms/registry.hpp"
#include "bootstrap/bootstrap.hpp"
#include "core/argument_check.hpp"
#include "core/buffer_pool.hpp"
#include "core/config.hpp"
#include "core/host_identity.hpp"
#include "transport/ucx_transport.hpp"

namespace coll {

struct Comm::Impl {
  Config config;
  std::unique_ptr<Bootstrap> bootstrap;
  std::vector<int> node_of_rank;
  std::unique_ptr<Transport> transport;
  BufferPool pool;
  Group world;
  std::uint64_t sequence = 0;
  std::string broken;  // the first error; a failed communicator refuses further calls

  Impl(Config configuration, std::unique_ptr<Bootstrap> boot)
      : config(std::move(configuration)), bootstrap(std::move(boot)) {
    build_node_map();
    for (int r = 0; r < bootstrap->size(); ++r) world.ranks.push_back(r);
    world.me = bootstrap->rank();
    config.ucx.ranks_on_this_node = static_cast<int>(
        std::count(node_of_rank.begin(), node_of_rank.end(), node_of_rank[world.me]));
    transport = make_ucx_transport(*bootstrap, node_of_rank, config.ucx);
  }

  // Ranks group into nodes by COLL_NODE when set, else by host; ids are dense, in order of
  // first appearance by rank.
  void build_node_map() {
    const std::string key =
        config.node ? "coll-node:" + std::to_string(*config.node) : "host:" + host_identity();
    const auto keys = bootstrap->allgather("node", key);
    std::map<std::string, int> ids;
    for (const auto& k : keys) {
      const auto [it, inserted] = ids.emplace(k, static_cast<int>(ids.size()));
      node_of_rank.push_back(it->second);
    }
  }

  std::string where() const { return "rank " + std::to_string(world.me) + ": "; }
};

Comm::Comm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Comm::~Comm() = default;

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
  return impl_->node_of_rank[static_cast<std::size_t>(rank())];
}
int Comm::num_nodes() const {
  return impl_->node_of_rank.empty()
             ? 0
             : *std::max_element(impl_->node_of_rank.begin(), impl_->node_of_rank.end()) + 1;
}
const std::vector<int>& Comm::node_of_rank() const {
  return impl_->node_of_rank;
}

std::vector<std::string> Comm::algorithms() {
  std::vector<std::string> names;
  for (const auto& info : allreduce_algorithms()) names.emplace_back(info.name);
  return names;
}

std::string Comm::describe() const {
  return "rank " + std::to_string(rank()) + "/" + std::to_string(size()) + " on node " +
         std::to_string(node()) + " of " + std::to_string(num_nodes()) + ", bootstrap " +
         impl_->bootstrap->describe() + ", " + impl_->transport->describe();
}

void Comm::allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                     std::string_view algorithm) {
  Impl& impl = *impl_;
  if (!impl.broken.empty()) {
    throw Error(Status::InvalidUsage,
                impl.where() + "communicator unusable after an earlier error: " + impl.broken);
  }
  if (static_cast<unsigned>(type) >= kNumDataTypes || static_cast<unsigned>(op) >= kNumReduceOps) {
    throw Error(Status::InvalidArgument, impl.where() + "allreduce: invalid data type " +
                                             std::to_string(int(type)) + " or operation " +
                                             std::to_string(int(op)));
  }
  if (count > 0 && (send == nullptr || recv == nullptr)) {
    throw Error(Status::InvalidArgument,
                impl.where() + "allreduce: null buffer with count " + std::to_string(count));
  }
  const std::string_view name = algorithm.empty() ? impl.config.algorithm : algorithm;
  const AlgorithmInfo* info = find_algorithm(name);
  if (info == nullptr) {
    std::string known;
    for (const auto& candidate : allreduce_algorithms()) {
      known += (known.empty() ? "" : ", ") + std::string(candidate.name);
    }
    throw Error(Status::InvalidArgument, impl.where() + "unknown all-reduce algorithm '" +
                                             std::string(name) + "' (known: " + known + ")");
  }
  const AllreduceArgs args{send, recv, count, type, op};
  const std::uint64_t sequence = ++impl.sequence;
  const CallDescriptor call = CallDescriptor::make(sequence, args, info->name);
  try {
    if (impl.config.check_arguments && impl.world.size() > 1) {
      check_same_call(*impl.transport, impl.world, TagSpace(sequence, 15), call);
    }
    const CollectiveContext context{*impl.transport, impl.pool, impl.world, TagSpace(sequence, 0),
                                    impl.config.tuning};
    info->run(context, args);
  } catch (const Error& error) {
    impl.broken = call.describe() + ": " + error.what();
    throw Error(error.status(), impl.where() + impl.broken);
  }
}

void Comm::barrier() {
  impl_->bootstrap->barrier("barrier/" + std::to_string(++impl_->sequence));
}

}  // namespace coll
