#include "shaped_transport.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>

#include "bootstrap/bootstrap.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "emulator/cluster_clock.hpp"
#include "send_stamps.hpp"
#include "transport/shared_segment.hpp"
#include "transport/transport_registry.hpp"
#include "transport/waiter.hpp"

namespace coll {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::int64_t scaled_ns(double seconds, double scale) {
  return static_cast<std::int64_t>(std::llround(seconds * scale * 1e9));
}

// Of nodes numbered 0.. (renumbered below): how many there are.
int node_count(const std::vector<int>& node_of_rank) {
  return *std::max_element(node_of_rank.begin(), node_of_rank.end()) + 1;
}

constexpr std::int64_t kNotReserved = std::numeric_limits<std::int64_t>::max();

// A send held until its emulated link has carried it.
struct HeldSend {
  std::int64_t sent_ns;                    // when the caller sent it
  std::int64_t release_ns = kNotReserved;  // once its path is reserved: when it arrives (on the
                                           // virtual clock: when it left the sender's port)
  int peer;
  Tag tag;
  const void* data;
  std::size_t bytes;
  bool posted = false;
  Transport::Request inner;  // once posted
};

// A receive on the virtual clock: its tag finds the message's send stamp once it completes.
struct StampedRecv {
  Tag tag;
  Transport::Request inner;
};

// One message's path from rank `from` to rank `to` over the job's links. A message's alpha is
// work it costs both of its ends, as LogGP's overhead (in 2017 most of the preset's alpha was
// each message's software and staging copies): the sender's, then its bytes go on the wire, and
// the receiver's, alongside it. A rank's work is one message at a time and overlaps the bytes
// of the messages before it. So a lone message arrives alpha + bytes * beta after it starts, as
// the model's link; a rank that sends to, or takes from, k peers spends k alphas, as the model
// prices a linear exchange; a pipeline's segments pay alpha once. The bytes pass the sender's
// out port (at its link class's rate; between nodes, its way into the NIC) and the links they
// share with other ranks' messages: inside a node the receiver's in port and the node's staging
// path, between nodes the two NICs.
template <class Link>
struct Path {
  JobLinks<Link>& links;
  const LinkShape& shape;
  int from, to;
  bool inside_node;
  std::size_t bytes;

  Path(JobLinks<Link>& job_links, const LinkShape& link_shape, const std::vector<int>& node_of_rank,
       int sender, int receiver, std::size_t size)
      : links(job_links),
        shape(link_shape),
        from(sender),
        to(receiver),
        inside_node(node_of_rank[static_cast<std::size_t>(sender)] ==
                    node_of_rank[static_cast<std::size_t>(receiver)]),
        bytes(size),
        from_node(node_of_rank[static_cast<std::size_t>(sender)]),
        to_node(node_of_rank[static_cast<std::size_t>(receiver)]) {}

  std::int64_t transfer_ns(double beta) const {
    return scaled_ns(double(bytes) * beta, shape.time_scale);
  }
  std::int64_t alpha_ns() const {
    return scaled_ns(inside_node ? shape.intra.alpha_s : shape.inter.alpha_s, shape.time_scale);
  }
  // The sender's work on the message, from `start` or when its work on the last one ended:
  // returns when the bytes go on the wire.
  std::int64_t reserve_sending(std::int64_t start) {
    return links.ports[from].sending.reserve(start, alpha_ns());
  }
  // The sender's own out port, which no other rank sends through: its GPU's link, which a
  // message to another node crosses at that link's rate on its way to the NIC (which carries
  // it at the inter-node rate): returns when the bytes left.
  std::int64_t reserve_senders_port(std::int64_t on_wire) {
    return links.ports[from].out.reserve(on_wire, transfer_ns(shape.intra.beta_s_per_byte));
  }
  // The receiver's work on the message, alongside the sender's, and the links the bytes share:
  // returns when the message has arrived.
  std::int64_t reserve_receiving(std::int64_t on_wire) {
    const std::int64_t worked = links.ports[to].taking.reserve(on_wire - alpha_ns(), alpha_ns());
    if (!inside_node) {
      const std::int64_t transfer = transfer_ns(shape.inter.beta_s_per_byte);
      return std::max({worked, links.nodes[from_node].nic_out.reserve(on_wire, transfer),
                       links.nodes[to_node].nic_in.reserve(on_wire, transfer)});
    }
    std::int64_t end = std::max(
        worked, links.ports[to].in.reserve(on_wire, transfer_ns(shape.intra.beta_s_per_byte)));
    if (shape.staging_beta_s_per_byte > 0) {
      end = std::max(end, links.nodes[from_node].staging.reserve(
                              on_wire, transfer_ns(shape.staging_beta_s_per_byte)));
    }
    return end;
  }
  // The whole path at once, on the real clock: returns when the message has arrived.
  std::int64_t cross(std::int64_t start) {
    const std::int64_t on_wire = reserve_sending(start);
    return std::max(reserve_senders_port(on_wire), reserve_receiving(on_wire));
  }

 private:
  int from_node, to_node;
};

class ShapedTransport final : public Transport {
 public:
  ShapedTransport(std::unique_ptr<Transport> inner, const LinkShape& shape, int rank,
                  std::vector<int> node_of_rank, std::shared_ptr<void> job_memory,
                  Bootstrap* bootstrap, const TransportOptions& options)
      : Transport(bootstrap, options),
        inner_(std::move(inner)),
        shape_(shape),
        rank_(rank),
        node_of_rank_(std::move(node_of_rank)),
        job_memory_(std::move(job_memory)),
        timeout_s_(options.timeout_s),
        description_("shaped(" + shape.to_string() + ") over " + inner_->describe()) {
    const int nodes = node_count(node_of_rank_);
    if (!shape_.virtual_clock) {
      buckets_ = JobLinks<TokenBucket>::at(job_memory_.get(), nodes);
      return;
    }
    const int ranks = static_cast<int>(node_of_rank_.size());
    calendars_ = JobLinks<LinkCalendar>::at(job_memory_.get(), nodes);
    stamps_.emplace(
        static_cast<std::byte*>(job_memory_.get()) + JobLinks<LinkCalendar>::bytes(nodes, ranks),
        ranks, rank_);
    virtual_clock_.emplace(shape_.reduce_s_per_byte);
  }

  ~ShapedTransport() override {
    // A communicator's abort reaches this transport; the inner one must also see it so that it
    // tears down as after a failure.
    try {
      check_interrupt();
    } catch (const Error& error) {
      inner_->interrupt(error.what());
    }
    if (failed()) inner_->mark_failed(failure_reason());
    for (HeldSend* send : held_) delete send;
    for (StampedRecv* recv : stamped_recvs_) delete recv;
  }

  Request send(int peer, Tag tag, const void* data, std::size_t bytes) override {
    check_link(peer);
    if (stamps_) return send_stamped(peer, tag, data, bytes);
    auto* held = new HeldSend{now_ns(), kNotReserved, peer, tag, data, bytes};
    held_.insert(held);
    waiting_.push_back(held);
    post_due();
    return Request{held, peer, true, bytes, false};
  }

  Request recv(int peer, Tag tag, void* data, std::size_t bytes) override {
    return stamped(tag, inner_->recv(peer, tag, data, bytes));
  }

  Request recv_up_to(int peer, Tag tag, void* data, std::size_t capacity) override {
    return stamped(tag, inner_->recv_up_to(peer, tag, data, capacity));
  }

  bool progress() override {
    const bool posted = post_due();
    return inner_->progress() || posted;
  }

  bool test(Request& request) override {
    if (request.done) return true;
    if (!request.is_send) return stamps_ ? test_stamped(request) : inner_->test(request);
    auto* held = static_cast<HeldSend*>(request.handle);
    if (!held->posted || !inner_->test(held->inner)) return false;
    // On the virtual clock its waiter's time moves on to when it left the sender's port.
    if (stamps_) cluster_clock::advance_to_ns(held->release_ns);
    held_.erase(held);
    delete held;
    request.handle = nullptr;
    request.done = true;
    return true;
  }

  void check_link(int peer) override { inner_->check_link(peer); }
  bool announce_failure(const std::string& reason) override {
    return inner_->announce_failure(reason);
  }
  bool wakes_on_delivery() const override { return inner_->wakes_on_delivery(); }
  bool add_wake_fds(std::vector<pollfd>& fds) override { return inner_->add_wake_fds(fds); }

  // Sleeps no later than the next held send's release or reservation, so that it leaves on time.
  void sleep_until_event(int abort_fd, int max_us) override {
    if (!waiting_.empty()) {
      std::int64_t next = kNotReserved;
      for (const HeldSend* send : waiting_) {
        next = std::min(next, send->release_ns == kNotReserved ? next_send_ns_ : send->release_ns);
      }
      const std::int64_t until_us = (next - now_ns() + 999) / 1000;
      if (until_us <= 0) return;
      max_us = static_cast<int>(std::min<std::int64_t>(max_us, until_us));
    }
    inner_->sleep_until_event(abort_fd, max_us);
  }

  const char* describe() const override { return description_.c_str(); }

 private:
  template <class Link>
  Path<Link> path(JobLinks<Link>& links, int from, int to, std::size_t bytes) {
    return Path<Link>(links, shape_, node_of_rank_, from, to, bytes);
  }

  // On the virtual clock: the sender's work on the message and its own port are reserved from
  // this thread's virtual time (or when this rank's work on its previous send ended) and the
  // message posted at once, stamped with when its bytes went on the wire and left the port. The
  // receiver reserves its own work and the links shared with other ranks' messages when it takes
  // the message, in the order it takes its messages in: a rank that posts a burst reaches the
  // links before its peers' bursts, and reserved at send time a shared link carried the first
  // sender's whole burst first, where a real link interleaves the flows (a parameter server then
  // had a segment from every worker only after whole bursts). A server takes segment s from
  // every worker before segment s + 1, so its links serve them in turn.
  Request send_stamped(int peer, Tag tag, const void* data, std::size_t bytes) {
    const std::int64_t start = std::max(next_send_ns_, cluster_clock::virtual_now_ns());
    auto to_peer = path(calendars_, rank_, peer, bytes);
    const std::int64_t on_wire = to_peer.reserve_sending(start);
    const std::int64_t left = to_peer.reserve_senders_port(on_wire);
    next_send_ns_ = on_wire;  // this rank's work on the next message may start
    stamps_->put(peer, tag, {on_wire, left}, timeout_s_);
    // The send completes, for a thread that waits for it, once it has left the sender's port.
    auto* held = new HeldSend{start, left, peer, tag, data, bytes};
    held->inner = inner_->send(peer, tag, data, bytes);
    held->posted = true;
    held_.insert(held);
    return Request{held, peer, true, bytes, false};
  }

  // A receive on the virtual clock keeps its tag, to find its message's send stamp. It stays
  // pending even when its message was already in: the thread's time moves on when it sees the
  // receive complete, not when it posts it (a send posted in between leaves no later).
  Request stamped(Tag tag, Request inner) {
    if (!stamps_) return inner;
    auto* recv = new StampedRecv{tag, inner};
    stamped_recvs_.insert(recv);
    inner.handle = recv;
    inner.done = false;
    return inner;
  }

  // Once the message is in, the links it shares are reserved and the receiving thread's virtual
  // time moves on to its arrival, when every link of its path has carried it.
  bool test_stamped(Request& request) {
    auto* recv = static_cast<StampedRecv*>(request.handle);
    if (!recv->inner.done && !inner_->test(recv->inner)) return false;
    const SendStamp sent = stamps_->take(request.peer, recv->tag);
    auto from_peer = path(calendars_, request.peer, rank_, recv->inner.bytes);
    cluster_clock::advance_to_ns(
        std::max(sent.sent_ns, from_peer.reserve_receiving(sent.on_wire_ns)));
    request.bytes = recv->inner.bytes;
    stamped_recvs_.erase(recv);
    delete recv;
    request.handle = nullptr;
    request.done = true;
    return true;
  }

  // This rank's sends take their paths in send order, each from alpha before the one before has
  // arrived (on the emulated clock), so that its work on the message overlaps that crossing's
  // end and its bytes follow at once: sends of other ranks reserved meanwhile interleave with
  // this rank's, as flows share a real link, where reserving all of a burst at once would queue
  // every other rank's behind it.
  void reserve_due(std::int64_t now) {
    for (HeldSend* send : waiting_) {
      if (send->release_ns != kNotReserved) continue;
      if (next_send_ns_ > now) return;
      auto to_peer = path(buckets_, rank_, send->peer, send->bytes);
      send->release_ns = to_peer.cross(std::max(next_send_ns_, send->sent_ns));
      next_send_ns_ = send->release_ns - to_peer.alpha_ns();
    }
  }

  // Posts every held send whose time has come, in the order they were sent (a peer's releases
  // never decrease, so its messages keep their order).
  bool post_due() {
    if (waiting_.empty()) return false;
    const std::int64_t now = now_ns();
    reserve_due(now);
    bool posted = false;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
      HeldSend* send = *it;
      if (send->release_ns > now) {
        ++it;
        continue;
      }
      send->inner = inner_->send(send->peer, send->tag, send->data, send->bytes);
      send->posted = true;
      posted = true;
      it = waiting_.erase(it);
    }
    return posted;
  }

  std::unique_ptr<Transport> inner_;
  LinkShape shape_;
  int rank_;
  std::vector<int> node_of_rank_;  // nodes numbered 0..
  std::shared_ptr<void> job_memory_;
  double timeout_s_;
  JobLinks<TokenBucket> buckets_;     // on the real clock, in job_memory_
  JobLinks<LinkCalendar> calendars_;  // on the virtual clock, in job_memory_
  std::optional<SendStamps> stamps_;  // on the virtual clock, in job_memory_ after calendars_
  std::optional<cluster_clock::VirtualClockUser> virtual_clock_;
  std::deque<HeldSend*> waiting_;       // held, not yet posted, in send order
  std::int64_t next_send_ns_ = 0;       // when this rank's next send may start (reserve_due,
                                        // send_stamped)
  std::unordered_set<HeldSend*> held_;  // every send not yet completed by test()
  std::unordered_set<StampedRecv*> stamped_recvs_;  // every such receive not yet completed
  std::string description_;
};

std::vector<int> renumbered(const std::vector<int>& node_of_rank) {
  std::vector<int> ids, out;
  for (int node : node_of_rank) {
    auto found = std::find(ids.begin(), ids.end(), node);
    if (found == ids.end()) found = ids.insert(ids.end(), node);
    out.push_back(static_cast<int>(found - ids.begin()));
  }
  return out;
}

// Every rank maps the job's links: one segment for the whole job (its emulated nodes all run
// on this machine), made, named and unlinked as SharedSegment does.
std::shared_ptr<void> shared_job_memory(Bootstrap& bootstrap, const LinkShape& shape, int nodes) {
  auto segment = std::make_shared<SharedSegment>(SharedSegment::map_per_group(
      bootstrap, std::vector<int>(static_cast<std::size_t>(bootstrap.size()), 0), "shaped",
      shaped_job_bytes(shape, nodes, bootstrap.size())));
  if (!segment->mapped()) {
    throw Error(Status::SystemError, "shaped transport: rank " + std::to_string(bootstrap.rank()) +
                                         " cannot share the link buckets (" + segment->failure() +
                                         "): every rank of a shaped job must run on this machine");
  }
  return std::shared_ptr<void>(segment, segment->base());
}

}  // namespace

// What the ranks of a node share besides messages stays unused: hand-offs through it would bypass
// the emulated links.
Connection wrap_in_shaped_transport(Connection inner, Bootstrap& bootstrap,
                                    const std::vector<int>& node_of_rank,
                                    const TransportOptions& options) {
  const auto text = env_string("COLL_SHAPE");
  if (!text) {
    throw Error(Status::InvalidArgument,
                "COLL_TRANSPORT=shaped:... needs COLL_SHAPE (intra=ALPHA:BETA,inter=ALPHA:BETA"
                "[,staging=BETA][,scale=K][,clock=real|virtual][,reduce=GAMMA])");
  }
  const LinkShape shape = LinkShape::parse(*text, "COLL_SHAPE");
  const std::vector<int> nodes = renumbered(node_of_rank);
  auto memory = shared_job_memory(bootstrap, shape, node_count(nodes));
  Connection shaped{make_shaped_transport(std::move(inner.transport), shape, bootstrap.rank(),
                                          nodes, std::move(memory), &bootstrap, options)};
  shaped.emulated_links = true;
  return shaped;
}

std::unique_ptr<Transport> make_shaped_transport(std::unique_ptr<Transport> inner,
                                                 const LinkShape& shape, int rank,
                                                 const std::vector<int>& node_of_rank,
                                                 std::shared_ptr<void> job_memory,
                                                 Bootstrap* bootstrap,
                                                 const TransportOptions& options) {
  return std::make_unique<ShapedTransport>(std::move(inner), shape, rank, renumbered(node_of_rank),
                                           std::move(job_memory), bootstrap, options);
}

std::size_t shaped_job_bytes(const LinkShape& shape, int nodes, int ranks) {
  if (!shape.virtual_clock) return JobLinks<TokenBucket>::bytes(nodes, ranks);
  return JobLinks<LinkCalendar>::bytes(nodes, ranks) + SendStamps::bytes(ranks);
}

std::shared_ptr<void> shaped_job_in_process(const LinkShape& shape, int nodes, int ranks) {
  const std::size_t size = shaped_job_bytes(shape, nodes, ranks);
  auto memory = std::shared_ptr<void>(::operator new(size, std::align_val_t(64)), [](void* block) {
    ::operator delete(block, std::align_val_t(64));
  });
  std::memset(memory.get(), 0, size);
  return memory;
}

}  // namespace coll
