// The UCX transport: tagged messages through UCX, over shared memory inside a node and TCP between
// nodes (COLL_TRANSPORT=ucx; by default the `auto` transport's links inside a node, and its links
// between nodes too under COLL_NET=ucx). Reads its own COLL_UCX_* options.
#include <poll.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "coll/clock.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "core/log.hpp"
#include "transport/network_interfaces.hpp"
#include "transport/transport_registry.hpp"
#include "transport/ucx_worker.hpp"
#include "transport/waiter.hpp"

namespace coll {
namespace {

struct UcxOptions {
  std::string local_tls = "sm,self";  // COLL_UCX_LOCAL_TLS
  std::string net_tls = "tcp";        // COLL_UCX_NET_TLS
  // COLL_UCX_NET_DEVICES; by default loopback on one host, across hosts the interface the
  // sockets transport would choose without knowing the other hosts' (network_interfaces.hpp).
  std::string net_devices = "lo";

  static UcxOptions from_environment(Bootstrap& bootstrap, const TransportOptions& transport) {
    UcxOptions options;
    if (auto value = env_string("COLL_UCX_LOCAL_TLS")) options.local_tls = *value;
    if (auto value = env_string("COLL_UCX_NET_TLS")) options.net_tls = *value;
    if (auto value = env_string("COLL_UCX_NET_DEVICES")) {
      options.net_devices = *value;
    } else if (transport.spans_hosts()) {
      InterfaceQuestion question{ipv4_interfaces(), interface_filter_from_environment(), true};
      if (auto host = bootstrap.rendezvous_host()) {
        question.rendezvous_route = interface_routing_to(*host);
      }
      options.net_devices = choose_interface(question).interface.name;
    }
    return options;
  }
};

// UCX's listener between hosts accepts any connection and libcoll cannot make it prove that it
// belongs to the job (as the sockets transport's links do): across hosts UCX runs only where the
// user says that only the job's hosts reach the network.
void refuse_untrusted_network() {
  if (env_integer("COLL_UCX_TRUST_NETWORK", 0, 1).value_or(0) == 1) return;
  throw Error(Status::InvalidArgument,
              "UCX between hosts (COLL_NET=ucx or COLL_TRANSPORT=ucx) accepts connections libcoll "
              "cannot authenticate: leave COLL_NET unset for libcoll's authenticated sockets, or "
              "set COLL_UCX_TRUST_NETWORK=1 where only the job's hosts reach the network");
}

// After a failure, how long UCX gets to finish what it still does with live peers.
constexpr double kDrainSeconds = 0.5;

// The settings of `ours` unless the environment sets any of `environment` (UCX_...): then all of
// them are left to UCX and the environment, so that a user's tuning is never half overridden.
UcxSettings unless_set(const UcxSettings& ours, std::initializer_list<const char*> environment) {
  for (const char* name : environment) {
    if (std::getenv(name) != nullptr) return {};
  }
  return ours;
}

// Shared memory: UCX switches to rendezvous (a handshake, then a cross-memory read) at 8 KiB,
// which makes small and middle all-reduces slower than copying through the FIFO; larger FIFO
// segments copy 32 KiB per fragment instead of 8 KiB. The FIFO stays faster while the data is in
// cache, up to a few MiB, so rendezvous starts at 4 MiB. Not when ranks outnumber cores: a full
// FIFO waits for its receiver to run, and a sender that sleeps meanwhile is woken only by its
// timer. Segments stay below 64 KiB (the FIFO's length field). Defaults; their measurements:
// docs/tuning.md, "Constants measured on the build VM".
constexpr std::size_t kFifoPayloadBytes = 32 * 1024;  // MM_SEG_SIZE less UCX's header

UcxSettings local_settings(const std::string& tls, const TransportOptions& transport) {
  if (tls != "sm,self" || transport.ranks_outnumber_cores()) return {};
  return unless_set(
      {{"RNDV_THRESH", "4M"}, {"MM_SEG_SIZE", std::to_string(kFifoPayloadBytes + 64)}},
      {"UCX_RNDV_THRESH", "UCX_MM_SEG_SIZE", "UCX_POSIX_SEG_SIZE", "UCX_SYSV_SEG_SIZE"});
}

// TCP between nodes moves collective-sized messages: larger socket buffers and segments than
// UCX's defaults (8 KiB send, 64 KiB receive segments) cut the system calls and copies per byte
// (defaults; their measurement: docs/tuning.md, "Constants measured on the build VM").
// Only for exactly "tcp" (other transports lack these settings), and all or none: any of them
// in the environment (UCX_TCP_SNDBUF, ...) leaves all four to UCX and the environment.
UcxSettings net_settings(const std::string& tls) {
  if (tls != "tcp") return {};
  return unless_set(
      {{"SNDBUF", "8M"}, {"RCVBUF", "8M"}, {"TX_SEG_SIZE", "256K"}, {"RX_SEG_SIZE", "1M"}},
      {"UCX_TCP_SNDBUF", "UCX_TCP_RCVBUF", "UCX_TCP_TX_SEG_SIZE", "UCX_TCP_RX_SEG_SIZE"});
}

// A failed rank's last words to a peer of its node (announce_failure), where no error handler
// tells a peer's death: every rank keeps a receive posted for them from each such peer. No
// collective's tag: context 255, sequence 0xFFF, stage 15, and a message index no argument
// check reaches (the UCX warm-up's is all ones).
constexpr std::size_t kMaxGoodbyeBytes = 1024;
Tag goodbye_tag(int sender) {
  return (~Tag{0} & ~(Tag{0xFFFF} << 24) & ~Tag{1}) | (Tag(sender & 0xFFFF) << 24);
}

struct PeerLink {
  UcxWorker* worker = nullptr;
  ucp_ep_h endpoint = nullptr;
  ucs_status_t failure = UCS_OK;  // set by UCX's error handler when the link breaks
  void* goodbye = nullptr;        // the posted receive of the peer's last words (node peers)
  char goodbye_text[kMaxGoodbyeBytes];
};

void on_endpoint_error(void* arg, ucp_ep_h, ucs_status_t status) {
  static_cast<PeerLink*>(arg)->failure = status;
}

class UcxTransport final : public Transport {
 public:
  UcxTransport(Bootstrap& bootstrap, const std::vector<int>& node_of_rank,
               const TransportOptions& options);
  ~UcxTransport() override;

  Request send(int peer, Tag tag, const void* data, std::size_t bytes) override;
  Request recv(int peer, Tag tag, void* data, std::size_t bytes) override;
  Request recv_up_to(int peer, Tag tag, void* data, std::size_t capacity) override {
    return post_receive(peer, tag, data, capacity, true);
  }
  bool progress() override;
  bool test(Request& request) override;
  bool probe(int peer, Tag tag) override;
  const char* describe() const override { return description_.c_str(); }
  void check_link(int peer) override;
  bool add_wake_fds(std::vector<pollfd>& fds) override;
  bool announce_failure(const std::string& reason) override;

 private:
  PeerLink& link(int peer);
  Request post_receive(int peer, Tag tag, void* data, std::size_t bytes, bool up_to);
  void track(void* request);
  void forget(void* request);
  void cancel_in_flight();
  void close_endpoints(bool graceful);
  void warm_shared_memory(const std::vector<int>& node_of_rank);

  Bootstrap& bootstrap_;
  std::unique_ptr<UcxWorker> local_;
  std::unique_ptr<UcxWorker> net_;
  std::vector<std::unique_ptr<PeerLink>> links_;
  // Requests posted and not yet completed: a few per collective, so a vector searched on
  // completion costs less than a hash set's node per request.
  std::vector<void*> in_flight_;
  bool drained_ = true;     // false: after a failure, UCX still had operations queued
  std::string last_words_;  // what announce_failure sent (its sends read it until they end)
  std::string description_;
};

UcxTransport::UcxTransport(Bootstrap& bootstrap, const std::vector<int>& node_of_rank,
                           const TransportOptions& transport_options)
    : Transport(&bootstrap, transport_options), bootstrap_(bootstrap) {
  const int me = bootstrap.rank();
  const int size = bootstrap.size();
  const UcxOptions options = UcxOptions::from_environment(bootstrap, transport_options);
  const auto linked = [&](int peer) { return transport_options.links_to(node_of_rank, me, peer); };
  bool any_remote = false;
  for (int peer = 0; peer < size; ++peer)
    any_remote |= linked(peer) && node_of_rank[peer] != node_of_rank[me];
  const UcxSettings shared_memory = local_settings(options.local_tls, transport_options);
  local_ = std::make_unique<UcxWorker>(options.local_tls, options.net_devices, shared_memory);
  if (any_remote && transport_options.spans_hosts()) refuse_untrusted_network();
  if (any_remote) {
    net_ = std::make_unique<UcxWorker>(options.net_tls, options.net_devices,
                                       net_settings(options.net_tls));
  }

  const auto local_addresses = bootstrap.allgather("ucx/local", local_->address());
  std::vector<std::string> net_addresses;
  if (net_) net_addresses = bootstrap.allgather("ucx/net", net_->address());

  int local_peers = 0;
  links_.resize(static_cast<std::size_t>(size));
  int remote_peers = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (!linked(peer)) continue;
    auto link_ptr = std::make_unique<PeerLink>();
    const bool same_node = node_of_rank[peer] == node_of_rank[me];
    local_peers += same_node;
    remote_peers += !same_node;
    link_ptr->worker = same_node ? local_.get() : net_.get();
    const std::string& address = same_node ? local_addresses[peer] : net_addresses[peer];
    ucp_ep_params_t params{};
    params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address = reinterpret_cast<const ucp_address_t*>(address.data());
    // UCX's shared-memory transports cannot detect a dead peer (and refuse PEER mode); there
    // the launcher's abort message and COLL_TIMEOUT do that job.
    params.err_mode = same_node ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb = on_endpoint_error;
    params.err_handler.arg = link_ptr.get();
    check_ucx(ucp_ep_create(link_ptr->worker->get(), &params, &link_ptr->endpoint),
              "ucp_ep_create to rank " + std::to_string(peer));
    if (same_node) {
      ucp_request_param_t receive{};
      receive.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
      link_ptr->goodbye = ucp_tag_recv_nbx(local_->get(), link_ptr->goodbye_text, kMaxGoodbyeBytes,
                                           goodbye_tag(peer), ~ucp_tag_t{0}, &receive);
      if (UCS_PTR_IS_PTR(link_ptr->goodbye)) {
        track(link_ptr->goodbye);
      } else {
        link_ptr->goodbye = nullptr;
      }
    }
    links_[static_cast<std::size_t>(peer)] = std::move(link_ptr);
  }
  if (!shared_memory.empty() && transport_options.links != Links::network) {
    warm_shared_memory(node_of_rank);
  }
  description_ = "ucx: " + std::to_string(local_peers) + " peer(s) over " + options.local_tls;
  if (any_remote) {
    description_ += ", " + std::to_string(remote_peers) + " over " + options.net_tls + "(" +
                    options.net_devices + ")";
  }
}

UcxTransport::~UcxTransport() {
  // Peers may still be finishing their last receives: close gracefully after a barrier when the
  // job is healthy. After a failure, peers may be stopped or gone: no barrier (it would wait out
  // a second COLL_TIMEOUT for them), and a forced close.
  bool healthy = !failed() && !bootstrap_.abort_reason().has_value();
  if (healthy) {
    try {
      bootstrap_.barrier("ucx/close");
    } catch (const Error&) {
      healthy = false;
    }
  }
  if (!healthy) {
    // Receives are withdrawn, and what UCX still does on its own (rendezvous reads from a
    // live peer) gets a moment to finish: destroying a worker with operations still queued on
    // a shared-memory endpoint fails an assertion inside UCX.
    cancel_in_flight();
    drained_ = local_->drain(kDrainSeconds) && (!net_ || net_->drain(kDrainSeconds));
  }
  close_endpoints(healthy);  // a forced close also fails sends stuck on a dead peer
  cancel_in_flight();
  if (!drained_) {
    // A peer that is stopped or gone never completes what it owes this rank over shared memory
    // (UCX can neither finish nor cancel it there), and UCX asserts when such a worker is
    // destroyed: leave these workers to the process's exit.
    log_line(LogLevel::Info, bootstrap_.rank(),
             "ucx: operations with a failed peer still pending; not destroying the workers");
    (void)local_.release();
    (void)net_.release();
  } else if (!healthy) {
    const QuietUcxWarnings quiet;
    net_.reset();
    local_.reset();
  }
}

// Eager messages land in FIFO segments that neither side has touched yet, and first touches of
// shared memory can be slow (a VM's balloon reclaims freed pages): the first calls, one per FIFO
// slot, would pay them. So every rank sends a full segment through every FIFO slot of its next
// rank on the node, once, before any collective runs (measured: docs/tuning.md, "Constants
// measured on the build VM").
void UcxTransport::warm_shared_memory(const std::vector<int>& node_of_rank) {
  constexpr int kMessages = 64;      // UCX's FIFO length (UCX_MM_FIFO_SIZE)
  constexpr Tag kWarmTag = ~Tag{0};  // no collective's tag: context 255, stage 15, ...
  const int me = bootstrap_.rank();
  const int size = static_cast<int>(node_of_rank.size());
  const auto local_step = [&](int step) {  // the next (+1) or previous (-1) rank of this node
    for (int peer = (me + step + size) % size; peer != me; peer = (peer + step + size) % size) {
      if (node_of_rank[peer] == node_of_rank[me]) return peer;
    }
    return me;
  };
  const int next = local_step(1), previous = local_step(-1);
  if (next == me) return;
  // Only the FIFO's memory needs touching: every message may land in the same buffers.
  std::vector<char> outgoing(kFifoPayloadBytes, 1), incoming(kFifoPayloadBytes);
  std::vector<Request> requests;
  requests.reserve(2 * kMessages);
  for (int i = 0; i < kMessages; ++i) {
    requests.push_back(recv(previous, kWarmTag, incoming.data(), incoming.size()));
    requests.push_back(send(next, kWarmTag, outgoing.data(), outgoing.size()));
  }
  wait_all(requests);
}

void UcxTransport::track(void* request) {
  if (UCS_PTR_IS_PTR(request)) in_flight_.push_back(request);
}

void UcxTransport::forget(void* request) {
  const auto it = std::find(in_flight_.begin(), in_flight_.end(), request);
  if (it == in_flight_.end()) return;
  *it = in_flight_.back();
  in_flight_.pop_back();
}

// After a failure, collectives abandon their requests: cancel and release them so that UCX
// neither completes them into freed buffers nor reports them as leaks.
void UcxTransport::cancel_in_flight() {
  for (void* request : in_flight_) {
    ucp_request_cancel(local_->get(), request);
    if (net_) ucp_request_cancel(net_->get(), request);
  }
  progress();
  for (void* request : in_flight_) ucp_request_free(request);
  in_flight_.clear();
}

void UcxTransport::close_endpoints(bool graceful) {
  std::vector<void*> closing;
  ucp_request_param_t params{};
  params.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  params.flags = graceful ? 0 : UCP_EP_CLOSE_FLAG_FORCE;
  for (auto& peer_link : links_) {
    if (!peer_link || !peer_link->endpoint) continue;
    void* request = ucp_ep_close_nbx(peer_link->endpoint, &params);
    if (UCS_PTR_IS_PTR(request)) closing.push_back(request);
  }
  const double give_up = now_seconds() + 2.0;
  while (!closing.empty() && now_seconds() < give_up) {
    progress();
    std::erase_if(closing, [](void* request) {
      if (ucp_request_check_status(request) == UCS_INPROGRESS) return false;
      ucp_request_free(request);
      return true;
    });
  }
}

PeerLink& UcxTransport::link(int peer) {
  if (peer < 0 || peer >= static_cast<int>(links_.size()) || !links_[peer]) {
    throw Error(Status::InternalError, "no transport link to rank " + std::to_string(peer));
  }
  return *links_[static_cast<std::size_t>(peer)];
}

void UcxTransport::check_link(int peer) {
  PeerLink& to = link(peer);
  if (to.failure != UCS_OK) waiter().peer_lost(peer, ucs_status_string(to.failure));
  if (to.goodbye == nullptr) return;
  ucp_tag_recv_info_t info{};
  if (ucp_tag_recv_request_test(to.goodbye, &info) == UCS_INPROGRESS) return;
  forget(to.goodbye);
  ucp_request_free(to.goodbye);
  to.goodbye = nullptr;
  waiter().peer_lost(
      peer, "it failed: " + std::string(to.goodbye_text, std::min(info.length, kMaxGoodbyeBytes)));
}

bool UcxTransport::announce_failure(const std::string& reason) {
  if (!last_words_.empty()) return false;
  last_words_ = reason.substr(0, kMaxGoodbyeBytes);
  bool told = false;
  for (const auto& peer_link : links_) {
    if (!peer_link || peer_link->goodbye == nullptr) continue;  // not a peer of this node
    ucp_request_param_t params{};
    void* request = ucp_tag_send_nbx(peer_link->endpoint, last_words_.data(), last_words_.size(),
                                     goodbye_tag(bootstrap_.rank()), &params);
    if (UCS_PTR_IS_ERR(request)) continue;
    track(request);
    told = true;
  }
  return told;
}

Transport::Request UcxTransport::send(int peer, Tag tag, const void* data, std::size_t bytes) {
  check_link(peer);
  ucp_request_param_t params{};
  void* request = ucp_tag_send_nbx(link(peer).endpoint, data, bytes, tag, &params);
  track(request);
  if (UCS_PTR_IS_ERR(request)) {
    // Usually the peer's shared memory is gone: it failed and exited, maybe after another rank
    // failed the job; peer_lost reports the job's reason when there is one.
    mark_failed();
    waiter().peer_lost(peer, "send of " + std::to_string(bytes) +
                                 " bytes failed: " + ucs_status_string(UCS_PTR_STATUS(request)));
  }
  return Request{request, peer, true, bytes, request == nullptr};
}

Transport::Request UcxTransport::recv(int peer, Tag tag, void* data, std::size_t bytes) {
  return post_receive(peer, tag, data, bytes, false);
}

Transport::Request UcxTransport::post_receive(int peer, Tag tag, void* data, std::size_t bytes,
                                              bool up_to) {
  check_link(peer);
  // A message that has already arrived may complete the receive at once, and UCX 1.13 then
  // reports no length: a receive that needs the length asks for a request in every case.
  ucp_request_param_t params{};
  if (up_to) params.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  void* request =
      ucp_tag_recv_nbx(link(peer).worker->get(), data, bytes, tag, ~ucp_tag_t{0}, &params);
  track(request);
  if (UCS_PTR_IS_ERR(request)) {
    check_ucx(UCS_PTR_STATUS(request),
              "receive of " + std::to_string(bytes) + " bytes from rank " + std::to_string(peer));
  }
  return Request{request, peer, false, bytes, request == nullptr, up_to};
}

bool UcxTransport::probe(int peer, Tag tag) {
  progress();
  ucp_tag_recv_info_t info{};
  return ucp_tag_probe_nb(link(peer).worker->get(), tag, ~ucp_tag_t{0}, 0, &info) != nullptr;
}

bool UcxTransport::progress() {
  bool progressed = ucp_worker_progress(local_->get()) != 0;
  if (net_) progressed |= ucp_worker_progress(net_->get()) != 0;
  return progressed;
}

bool UcxTransport::test(Request& request) {
  if (request.done) return true;
  ucs_status_t status;
  std::size_t received = request.bytes;
  if (request.is_send) {
    status = ucp_request_check_status(request.handle);
  } else {
    ucp_tag_recv_info_t info{};
    status = ucp_tag_recv_request_test(request.handle, &info);
    received = info.length;
  }
  if (status == UCS_INPROGRESS) return false;
  forget(request.handle);
  ucp_request_free(request.handle);
  request.handle = nullptr;
  request.done = true;
  if (status == UCS_ERR_MESSAGE_TRUNCATED) {
    waiter().size_mismatch(request.peer, request.bytes);
  }
  if (status != UCS_OK) waiter().peer_lost(request.peer, ucs_status_string(status));
  if (!request.is_send) waiter().complete_receive(request, received);
  return true;
}

// Arms every worker; one with pending events means progress instead of sleep.
bool UcxTransport::add_wake_fds(std::vector<pollfd>& fds) {
  if (!local_->arm() || (net_ && !net_->arm())) return false;
  fds.push_back({local_->event_fd(), POLLIN, 0});
  if (net_) fds.push_back({net_->event_fd(), POLLIN, 0});
  return true;
}

Connection make_ucx_transport(Bootstrap& bootstrap, const std::vector<int>& node_of_rank,
                              const TransportOptions& options) {
  return between_processes(std::make_unique<UcxTransport>(bootstrap, node_of_rank, options),
                           bootstrap, node_of_rank, options);
}

const TransportRegistration kUcx("ucx", make_ucx_transport);

}  // namespace
}  // namespace coll
