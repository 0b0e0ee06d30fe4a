#include "transport/shaped_transport.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <unordered_set>

#include "bootstrap/bootstrap.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
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
  std::int64_t release_ns = kNotReserved;  // once its path is reserved: when it has crossed
  int peer;
  Tag tag;
  const void* data;
  std::size_t bytes;
  bool posted = false;
  Transport::Request inner;  // once posted
};

class ShapedTransport final : public Transport {
 public:
  ShapedTransport(std::unique_ptr<Transport> inner, const LinkShape& shape, int rank,
                  std::vector<int> node_of_rank, std::shared_ptr<void> bucket_memory,
                  Bootstrap* bootstrap, const TransportOptions& options)
      : inner_(std::move(inner)),
        shape_(shape),
        rank_(rank),
        node_of_rank_(std::move(node_of_rank)),
        bucket_memory_(std::move(bucket_memory)),
        buckets_(JobBuckets::at(bucket_memory_.get(), node_count(node_of_rank_))),
        waiter_(*this, bootstrap, options),
        description_("shaped(" + shape.to_string() + ") over " + inner_->describe()) {}

  ~ShapedTransport() override {
    // A communicator's abort reaches this transport; the inner one must also see it so that it
    // tears down as after a failure.
    try {
      check_interrupt();
    } catch (const Error& error) {
      inner_->interrupt(error.what());
    }
    if (failed()) inner_->mark_failed();
    for (HeldSend* send : held_) delete send;
  }

  Request send(int peer, Tag tag, const void* data, std::size_t bytes) override {
    check_link(peer);
    auto* held = new HeldSend{now_ns(), kNotReserved, peer, tag, data, bytes};
    held_.insert(held);
    waiting_.push_back(held);
    post_due();
    return Request{held, peer, true, bytes, false};
  }

  Request recv(int peer, Tag tag, void* data, std::size_t bytes) override {
    return inner_->recv(peer, tag, data, bytes);
  }

  Request recv_up_to(int peer, Tag tag, void* data, std::size_t capacity) override {
    return inner_->recv_up_to(peer, tag, data, capacity);
  }

  bool progress() override {
    const bool posted = post_due();
    return inner_->progress() || posted;
  }

  bool test(Request& request) override {
    if (request.done) return true;
    if (!request.is_send) return inner_->test(request);
    auto* held = static_cast<HeldSend*>(request.handle);
    if (!held->posted || !inner_->test(held->inner)) return false;
    held_.erase(held);
    delete held;
    request.handle = nullptr;
    request.done = true;
    return true;
  }

  void wait_all(std::span<Request> requests) override { waiter_.wait_all(requests); }
  void wait_for(WaitCondition& condition) override { waiter_.wait_for(condition); }
  std::string fail_job(const std::string& reason) override { return waiter_.fail_job(reason); }
  void check_link(int peer) override { inner_->check_link(peer); }
  bool wakes_on_delivery() const override { return inner_->wakes_on_delivery(); }
  bool emulates_links() const override { return true; }

  // Sleeps no later than the next held send's release or reservation, so that it leaves on time.
  void sleep_until_event(int abort_fd, int max_us) override {
    if (!waiting_.empty()) {
      std::int64_t next = kNotReserved;
      for (const HeldSend* send : waiting_) {
        next =
            std::min(next, send->release_ns == kNotReserved ? carried_until_ns_ : send->release_ns);
      }
      const std::int64_t until_us = (next - now_ns() + 999) / 1000;
      if (until_us <= 0) return;
      max_us = static_cast<int>(std::min<std::int64_t>(max_us, until_us));
    }
    inner_->sleep_until_event(abort_fd, max_us);
  }

  const char* describe() const override { return description_.c_str(); }

 private:
  // A message's crossing of its emulated path, starting no earlier than `start`: when its
  // bytes have passed (carried) and when it arrives, alpha later (release).
  struct Crossing {
    std::int64_t carried_ns, release_ns;
  };
  Crossing cross(int peer, std::size_t bytes, std::int64_t start) {
    const double k = shape_.time_scale;
    const int mine = node_of_rank_[static_cast<std::size_t>(rank_)];
    const int theirs = node_of_rank_[static_cast<std::size_t>(peer)];
    NodeBuckets& here = buckets_.nodes[mine];
    std::int64_t end = start;
    if (mine == theirs) {
      const std::int64_t transfer = scaled_ns(double(bytes) * shape_.intra.beta_s_per_byte, k);
      end = std::max(buckets_.ports[rank_].out.reserve(start, transfer),
                     buckets_.ports[peer].in.reserve(start, transfer));
      if (shape_.staging_beta_s_per_byte > 0) {
        end =
            std::max(end, here.staging.reserve(
                              start, scaled_ns(double(bytes) * shape_.staging_beta_s_per_byte, k)));
      }
      return {end, end + scaled_ns(shape_.intra.alpha_s, k)};
    }
    const std::int64_t transfer = scaled_ns(double(bytes) * shape_.inter.beta_s_per_byte, k);
    end = std::max(here.nic_out.reserve(start, transfer),
                   buckets_.nodes[theirs].nic_in.reserve(start, transfer));
    return {end, end + scaled_ns(shape_.inter.alpha_s, k)};
  }

  // This rank's sends take their paths in send order, each once the one before has been carried
  // (its own port is busy until then), from that moment on the emulated clock: sends of other
  // ranks reserved meanwhile interleave with this rank's, as flows share a real link, where
  // reserving all of a burst at once would queue every other rank's behind it.
  void reserve_due(std::int64_t now) {
    for (HeldSend* send : waiting_) {
      if (send->release_ns != kNotReserved) continue;
      if (carried_until_ns_ > now) return;
      const Crossing crossing =
          cross(send->peer, send->bytes, std::max(carried_until_ns_, send->sent_ns));
      carried_until_ns_ = crossing.carried_ns;
      send->release_ns = crossing.release_ns;
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
  std::shared_ptr<void> bucket_memory_;
  JobBuckets buckets_;  // in bucket_memory_
  Waiter waiter_;
  std::deque<HeldSend*> waiting_;       // held, not yet posted, in send order
  std::int64_t carried_until_ns_ = 0;   // when this rank's last reserved send has been carried
  std::unordered_set<HeldSend*> held_;  // every send not yet completed by test()
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

// Every rank maps the job's buckets: one segment for the whole job (its emulated nodes all run
// on this machine), made, named and unlinked as SharedSegment does.
std::shared_ptr<void> shared_job_buckets(Bootstrap& bootstrap, int nodes) {
  auto segment = std::make_shared<SharedSegment>(SharedSegment::map_per_group(
      bootstrap, std::vector<int>(static_cast<std::size_t>(bootstrap.size()), 0), "shaped",
      JobBuckets::bytes(nodes, bootstrap.size())));
  if (!segment->mapped()) {
    throw Error(Status::SystemError, "shaped transport: rank " + std::to_string(bootstrap.rank()) +
                                         " cannot share the link buckets (" + segment->failure() +
                                         "): every rank of a shaped job must run on this machine");
  }
  return std::shared_ptr<void>(segment, segment->base());
}

std::unique_ptr<Transport> wrap_registered(std::unique_ptr<Transport> inner, Bootstrap& bootstrap,
                                           const std::vector<int>& node_of_rank,
                                           const TransportOptions& options) {
  const auto text = env_string("COLL_SHAPE");
  if (!text) {
    throw Error(Status::InvalidArgument,
                "COLL_TRANSPORT=shaped:... needs COLL_SHAPE (intra=ALPHA:BETA,inter=ALPHA:BETA"
                "[,staging=BETA][,scale=K])");
  }
  const LinkShape shape = LinkShape::parse(*text, "COLL_SHAPE");
  const std::vector<int> nodes = renumbered(node_of_rank);
  auto buckets = shared_job_buckets(bootstrap, node_count(nodes));
  return make_shaped_transport(std::move(inner), shape, bootstrap.rank(), nodes, std::move(buckets),
                               &bootstrap, options);
}

const TransportWrapperRegistration kShaped("shaped", wrap_registered);

}  // namespace

std::unique_ptr<Transport> make_shaped_transport(std::unique_ptr<Transport> inner,
                                                 const LinkShape& shape, int rank,
                                                 const std::vector<int>& node_of_rank,
                                                 std::shared_ptr<void> buckets,
                                                 Bootstrap* bootstrap,
                                                 const TransportOptions& options) {
  return std::make_unique<ShapedTransport>(std::move(inner), shape, rank, renumbered(node_of_rank),
                                           std::move(buckets), bootstrap, options);
}

JobBuckets JobBuckets::at(void* memory, int nodes) {
  auto* first_node = static_cast<NodeBuckets*>(memory);
  return {first_node, reinterpret_cast<PortBuckets*>(first_node + nodes)};
}

std::size_t JobBuckets::bytes(int nodes, int ranks) {
  return sizeof(NodeBuckets) * static_cast<std::size_t>(nodes) +
         sizeof(PortBuckets) * static_cast<std::size_t>(ranks);
}

std::shared_ptr<void> JobBuckets::in_process(int nodes, int ranks) {
  const std::size_t size = bytes(nodes, ranks);
  auto memory = std::shared_ptr<void>(::operator new(size, std::align_val_t(64)), [](void* block) {
    ::operator delete(block, std::align_val_t(64));
  });
  std::memset(memory.get(), 0, size);
  return memory;
}

}  // namespace coll
