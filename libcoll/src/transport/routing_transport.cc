// The default transport (COLL_TRANSPORT=auto): each link goes to the transport of its class, as
// UCC's collective layer picks a transport layer per link. Links inside a node go to `ucx`
// (shared memory), links between nodes to COLL_NET: `sockets` (libcoll's own TCP, the default)
// or `ucx` (UCX's TCP; one UCX transport then carries every link). The node's resources come
// with the transport of its links.
#include <algorithm>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "transport/transport_registry.hpp"

namespace coll {
namespace {

class RoutingTransport final : public Transport {
 public:
  RoutingTransport(std::unique_ptr<Transport> node, std::unique_ptr<Transport> network,
                   const std::vector<int>& node_of_rank, int me, Bootstrap& bootstrap,
                   const TransportOptions& options)
      : Transport(&bootstrap, options),
        node_(std::move(node)),
        network_(std::move(network)),
        description_(std::string(node_->describe()) + ", " + network_->describe()) {
    for (const int node_id : node_of_rank) {
      over_network_.push_back(node_id != node_of_rank[static_cast<std::size_t>(me)]);
    }
  }

  // A failure or an abort seen here is the held transports' too: they tear down without waiting
  // for peers.
  ~RoutingTransport() override {
    if (!failed()) return;
    node_->mark_failed(failure_reason());
    network_->mark_failed(failure_reason());
  }

  Request send(int peer, Tag tag, const void* data, std::size_t bytes) override {
    return to(peer).send(peer, tag, data, bytes);
  }
  Request recv(int peer, Tag tag, void* data, std::size_t bytes) override {
    return to(peer).recv(peer, tag, data, bytes);
  }
  Request recv_up_to(int peer, Tag tag, void* data, std::size_t capacity) override {
    return to(peer).recv_up_to(peer, tag, data, capacity);
  }
  bool progress() override {
    const bool node = node_->progress();
    return network_->progress() || node;
  }
  bool test(Request& request) override { return to(request.peer).test(request); }
  bool probe(int peer, Tag tag) override { return to(peer).probe(peer, tag); }
  void check_link(int peer) override { to(peer).check_link(peer); }
  bool announce_failure(const std::string& reason) override {
    const bool node = node_->announce_failure(reason);
    return network_->announce_failure(reason) || node;
  }
  bool add_wake_fds(std::vector<pollfd>& fds) override {
    return node_->add_wake_fds(fds) && network_->add_wake_fds(fds);
  }
  const char* describe() const override { return description_.c_str(); }

 private:
  Transport& to(int peer) {
    if (peer < 0 || peer >= static_cast<int>(over_network_.size())) {
      throw Error(Status::InternalError, "no transport link to rank " + std::to_string(peer));
    }
    return over_network_[static_cast<std::size_t>(peer)] ? *network_ : *node_;
  }

  std::unique_ptr<Transport> node_;
  std::unique_ptr<Transport> network_;
  std::vector<bool> over_network_;  // by rank
  std::string description_;
};

// COLL_NET: the transport of the links between nodes.
std::string network_transport() {
  const std::string name = env_string("COLL_NET").value_or("sockets");
  if (name != "sockets" && name != "ucx") {
    throw Error(Status::InvalidArgument, "COLL_NET='" + name + "': expected sockets or ucx");
  }
  return name;
}

Connection make_routing_transport(Bootstrap& bootstrap, const std::vector<int>& node_of_rank,
                                  const TransportOptions& options) {
  const std::string network = network_transport();
  const int me = bootstrap.rank();
  const bool spans_nodes = std::any_of(node_of_rank.begin(), node_of_rank.end(), [&](int node) {
    return node != node_of_rank[static_cast<std::size_t>(me)];
  });
  if (!spans_nodes || network == "ucx") {
    return make_transport("ucx", bootstrap, node_of_rank, options);
  }
  TransportOptions inside = options;
  inside.links = Links::node;
  Connection node = make_transport("ucx", bootstrap, node_of_rank, inside);
  TransportOptions across = options;
  across.links = Links::network;
  Connection links_between = make_transport(network, bootstrap, node_of_rank, across);
  Connection routed{std::make_unique<RoutingTransport>(std::move(node.transport),
                                                       std::move(links_between.transport),
                                                       node_of_rank, me, bootstrap, options),
                    std::move(node.node)};
  return routed;
}

const TransportRegistration kAuto("auto", make_routing_transport);

}  // namespace
}  // namespace coll
