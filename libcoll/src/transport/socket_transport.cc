// libcoll's own TCP sockets as a transport (COLL_TRANSPORT=sockets for every link; by default
// the `auto` transport's links between nodes, COLL_NET=sockets): one authenticated connection per
// pair of ranks (socket_rendezvous.hpp), messages over it by SocketLinks. Reads its own options:
// COLL_SOCKET_IFNAME (the interface, network_interfaces.hpp) and COLL_SOCKET_SNDBUF.
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/job_secret.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "core/log.hpp"
#include "transport/network_interfaces.hpp"
#include "transport/socket_links.hpp"
#include "transport/socket_rendezvous.hpp"
#include "transport/transport_registry.hpp"
#include "transport/waiter.hpp"

namespace coll {
namespace {

// Where the wire is a memory copy (loopback; veth links between hosts emulated on one machine)
// the receiving rank reads the data from cache only while little of it is in flight: the
// kernel's autotuning grows each send buffer to 4 MiB, and a 64 MiB all-reduce took longer than
// with 256 KiB: 1.3-1.4x with 4 ranks on 2 cores over loopback (docs/bandwidth.md), 1.29x at 2
// emulated hosts and 1.09x at 4 (bench/results/multihost-2026-12-06-autotuned). A link with a
// longer round trip needs the bandwidth-delay product in flight: the buffer is the larger of the
// two.
constexpr std::size_t kSmallSendBufferBytes = 256 * 1024;
constexpr long long kMinSendBufferBytes = 4 * 1024;
constexpr long long kMaxSendBufferBytes = 1LL << 30;
constexpr std::size_t kMaxMeasuredSendBufferBytes = 64 << 20;

// What a rank's links measure: the longest round trip the kernel saw on them during the
// handshake (TCP_INFO) and the interface's speed (/sys/class/net/NAME/speed); 0 where unknown.
struct LinkMeasure {
  double round_trip_s = 0;
  double bits_per_s = 0;
  std::size_t bandwidth_delay_bytes() const {
    return static_cast<std::size_t>(round_trip_s * bits_per_s / 8);
  }
};

LinkMeasure measure_links(const NetworkInterface& interface, const std::vector<Socket>& sockets) {
  LinkMeasure measure;
  for (const Socket& socket : sockets) {
    tcp_info info{};
    socklen_t length = sizeof info;
    if (socket.valid() && ::getsockopt(socket.fd(), IPPROTO_TCP, TCP_INFO, &info, &length) == 0) {
      measure.round_trip_s = std::max(measure.round_trip_s, info.tcpi_rtt * 1e-6);
    }
  }
  std::ifstream speed("/sys/class/net/" + interface.name + "/speed");
  long long megabits = 0;
  if (speed >> megabits && megabits > 0) measure.bits_per_s = double(megabits) * 1e6;
  return measure;
}

// COLL_SOCKET_SNDBUF, else 256 KiB over loopback, else the larger of 256 KiB and the links'
// bandwidth-delay product, else (speed unknown) the kernel's autotuning (0).
std::size_t socket_send_buffer_of(const NetworkInterface& interface, const LinkMeasure& measure) {
  const auto value = env_string("COLL_SOCKET_SNDBUF");
  if (!value) {
    if (interface.loopback()) return kSmallSendBufferBytes;
    if (measure.bits_per_s == 0) return 0;
    return std::clamp(measure.bandwidth_delay_bytes(), kSmallSendBufferBytes,
                      kMaxMeasuredSendBufferBytes);
  }
  if (*value == "auto") return 0;
  const auto bytes = parse_size(*value);
  if (!bytes || *bytes < kMinSendBufferBytes || *bytes > kMaxSendBufferBytes) {
    throw Error(Status::InvalidArgument,
                "COLL_SOCKET_SNDBUF='" + *value +
                    "': expected a size from 4K to 1G (such as 256K) or auto");
  }
  return static_cast<std::size_t>(*bytes);
}

// ", send buffer 256K" or ", send buffer autotuned": the collbench header records it.
std::string socket_send_buffer_text(std::size_t bytes) {
  if (bytes == 0) return ", send buffer autotuned";
  return ", send buffer " +
         (bytes % 1024 == 0 ? std::to_string(bytes / 1024) + "K" : std::to_string(bytes));
}

// Collective where the job spans hosts: the ranks then publish their interfaces to each other.
InterfaceChoice choose_socket_interface(Bootstrap& bootstrap, const TransportOptions& options) {
  InterfaceQuestion question;
  question.mine = ipv4_interfaces();
  question.filter = interface_filter_from_environment();
  question.spans_hosts = options.spans_hosts();
  if (!question.spans_hosts) return choose_interface(question);
  if (auto host = bootstrap.rendezvous_host())
    question.rendezvous_route = interface_routing_to(*host);
  std::string mine;
  for (const auto& interface : question.mine) {
    if (!interface.loopback()) mine += (mine.empty() ? "" : " ") + interface.serialize();
  }
  const auto all = bootstrap.allgather("sockets/interfaces", mine);
  const int me = bootstrap.rank();
  for (int rank = 0; rank < static_cast<int>(all.size()); ++rank) {
    if (options.host_of_rank[rank] == options.host_of_rank[me]) continue;
    std::vector<NetworkInterface> theirs;
    std::istringstream words(all[rank]);
    for (std::string word; words >> word;) {
      if (auto interface = NetworkInterface::deserialize(word)) theirs.push_back(*interface);
    }
    question.others.push_back(std::move(theirs));
  }
  return choose_interface(question);
}

class SocketTransport final : public Transport {
 public:
  SocketTransport(Bootstrap& bootstrap, const std::vector<int>& node_of_rank,
                  const TransportOptions& options)
      : Transport(&bootstrap, options) {
    const int me = bootstrap.rank();
    const InterfaceChoice choice = choose_socket_interface(bootstrap, options);
    log_line(LogLevel::Info, me,
             "sockets: listening on " + choice.interface.name + " " + choice.interface.address +
                 " (" + choice.why + ")");
    std::vector<bool> linked(node_of_rank.size());
    int peers = 0;
    for (int peer = 0; peer < static_cast<int>(linked.size()); ++peer) {
      linked[peer] = options.links_to(node_of_rank, me, peer);
      peers += linked[peer];
    }
    const RendezvousOptions rendezvous{choice.interface, job_secret(bootstrap), options.timeout_s};
    std::vector<Socket> sockets = connect_linked_ranks(bootstrap, linked, rendezvous);
    const LinkMeasure measure = measure_links(choice.interface, sockets);
    const std::size_t send_buffer = socket_send_buffer_of(choice.interface, measure);
    links_.emplace(std::move(sockets), send_buffer);
    description_ = std::to_string(peers) + " over tcp sockets(" + choice.interface.name + ")" +
                   socket_send_buffer_text(send_buffer);
    if (!choice.interface.loopback() && measure.bits_per_s > 0) {
      description_ += " for a round trip of " +
                      std::to_string(static_cast<int>(measure.round_trip_s * 1e6)) + " us at " +
                      std::to_string(static_cast<long long>(measure.bits_per_s / 1e6)) + " Mb/s";
    }
    if (options.links == Links::all) description_ = "sockets: " + description_;
  }

  Request send(int peer, Tag tag, const void* data, std::size_t bytes) override {
    check_link(peer);
    Request request{links_->send(peer, tag, data, bytes), peer, true, bytes};
    test(request);  // short messages complete at once
    return request;
  }
  Request recv(int peer, Tag tag, void* data, std::size_t bytes) override {
    return post_receive(peer, tag, data, bytes, false);
  }
  Request recv_up_to(int peer, Tag tag, void* data, std::size_t capacity) override {
    return post_receive(peer, tag, data, capacity, true);
  }
  bool progress() override { return links_->progress(); }

  bool test(Request& request) override {
    if (request.done) return true;
    auto* operation = static_cast<SocketLinks::Operation*>(request.handle);
    const SocketLinks::Result result = links_->take_result(operation);
    if (result.state == SocketLinks::State::InProgress) {
      check_link(request.peer);
      return false;
    }
    request.handle = nullptr;
    request.done = true;
    if (result.state == SocketLinks::State::Truncated) {
      waiter().size_mismatch(request.peer, request.bytes);
    }
    if (!request.is_send) waiter().complete_receive(request, result.bytes);
    return true;
  }

  bool probe(int peer, Tag tag) override {
    progress();
    return links_->probe(peer, tag);
  }
  void check_link(int peer) override {
    const std::string& broken = links_->failure(peer);
    if (!broken.empty()) waiter().peer_lost(peer, broken);
  }
  bool add_wake_fds(std::vector<pollfd>& fds) override {
    links_->add_poll_fds(fds);
    return true;
  }
  const char* describe() const override { return description_.c_str(); }

  bool announce_failure(const std::string& reason) override {
    if (announced_) return false;
    announced_ = true;
    return links_->say_goodbye(reason);
  }

  ~SocketTransport() override {
    if (failed()) announce_failure(failure_reason());
  }

 private:
  Request post_receive(int peer, Tag tag, void* data, std::size_t bytes, bool up_to) {
    check_link(peer);
    Request request{links_->receive(peer, tag, data, bytes), peer, false, bytes, false, up_to};
    test(request);  // the message may have arrived already
    return request;
  }

  std::optional<SocketLinks> links_;
  bool announced_ = false;  // peers were told why this rank failed
  std::string description_;
};

Connection make_socket_transport(Bootstrap& bootstrap, const std::vector<int>& node_of_rank,
                                 const TransportOptions& options) {
  return between_processes(std::make_unique<SocketTransport>(bootstrap, node_of_rank, options),
                           bootstrap, node_of_rank, options);
}

const TransportRegistration kSockets("sockets", make_socket_transport);

}  // namespace
}  // namespace coll
