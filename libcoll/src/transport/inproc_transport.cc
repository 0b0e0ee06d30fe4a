#include "transport/inproc_transport.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "coll/env.hpp"
#include "coll/error.hpp"
#include "transport/node_slots.hpp"
#include "transport/transport_registry.hpp"
#include "transport/waiter.hpp"

namespace coll {
namespace {

// A receive posted before its message arrived; the sender fills it and marks it done.
struct PostedReceive {
  void* data;
  std::size_t bytes;
  std::size_t received = 0;
  bool done = false;
};

using MatchKey = std::pair<int, Tag>;  // (sender, tag)

// Ranks that are threads of one process reach each other's buffers directly.
class SharedAddressSpace final : public PeerMemory {
 public:
  explicit SharedAddressSpace(int size) : size_(size) {}
  bool connects(int a, int b) const override { return a >= 0 && b >= 0 && a < size_ && b < size_; }
  void read(int, std::uint64_t remote, void* local, std::size_t bytes) override {
    if (bytes > 0) std::memcpy(local, reinterpret_cast<const void*>(remote), bytes);
  }
  // Threads load each other's memory themselves, shared allocation or not.
  const std::byte* view(int, const SharedRegionRef&, std::uint64_t remote, std::size_t) override {
    return reinterpret_cast<const std::byte*>(remote);
  }

 private:
  int size_;
};

}  // namespace

// Everything sent to one rank. Messages that arrive before their receive wait in `unexpected`.
struct InprocWorld::Mailbox {
  std::mutex mutex;
  std::condition_variable delivered;
  std::uint64_t deliveries = 0;  // to posted receives; wakes the owner's waiter
  std::map<MatchKey, std::deque<std::vector<std::byte>>> unexpected;
  std::map<MatchKey, std::deque<PostedReceive*>> posted;
};

namespace {

class InprocTransport final : public Transport {
 public:
  InprocTransport(std::shared_ptr<InprocWorld> world, InprocWorld::Mailbox* mailboxes, int rank,
                  const TransportOptions& options, Bootstrap* bootstrap)
      : Transport(bootstrap, options),
        world_(std::move(world)),
        mailboxes_(mailboxes),
        rank_(rank),
        description_("inproc: " + std::to_string(world_->size()) + " ranks as threads") {}

  // After a failure, receives may be abandoned: withdraw the posted ones so that no sender
  // writes into freed memory, and release them all.
  ~InprocTransport() override {
    std::lock_guard lock(mailboxes_[rank_].mutex);
    mailboxes_[rank_].posted.clear();
    for (PostedReceive* receive : outstanding_) delete receive;
  }

  Request send(int peer, Tag tag, const void* data, std::size_t bytes) override {
    check_link(peer);
    InprocWorld::Mailbox& theirs = mailboxes_[peer];
    std::lock_guard lock(theirs.mutex);
    const MatchKey key{rank_, tag};
    auto waiting = theirs.posted.find(key);
    if (waiting != theirs.posted.end()) {
      PostedReceive* receive = waiting->second.front();
      waiting->second.pop_front();
      if (waiting->second.empty()) theirs.posted.erase(waiting);
      if (bytes > 0) std::memcpy(receive->data, data, std::min(bytes, receive->bytes));
      receive->received = bytes;
      receive->done = true;
      ++theirs.deliveries;
      theirs.delivered.notify_all();
    } else {
      const auto* first = static_cast<const std::byte*>(data);
      theirs.unexpected[key].emplace_back(first, first + bytes);
    }
    return Request{nullptr, peer, true, bytes, true};  // buffered: complete at once
  }

  Request recv(int peer, Tag tag, void* data, std::size_t bytes) override {
    return post_receive(peer, tag, data, bytes, false);
  }
  Request recv_up_to(int peer, Tag tag, void* data, std::size_t capacity) override {
    return post_receive(peer, tag, data, capacity, true);
  }

  Request post_receive(int peer, Tag tag, void* data, std::size_t bytes, bool up_to) {
    check_link(peer);
    InprocWorld::Mailbox& mine = mailboxes_[rank_];
    std::lock_guard lock(mine.mutex);
    const MatchKey key{peer, tag};
    auto arrived = mine.unexpected.find(key);
    if (arrived == mine.unexpected.end()) {
      auto* receive = new PostedReceive{data, bytes};
      mine.posted[key].push_back(receive);
      outstanding_.insert(receive);
      return Request{receive, peer, false, bytes, false, up_to};
    }
    const std::vector<std::byte> message = std::move(arrived->second.front());
    arrived->second.pop_front();
    if (arrived->second.empty()) mine.unexpected.erase(arrived);
    Request request{nullptr, peer, false, bytes, true, up_to};
    waiter().complete_receive(request, message.size());
    if (!message.empty()) std::memcpy(data, message.data(), message.size());
    return request;
  }

  bool progress() override { return false; }  // senders deliver as they post

  bool test(Request& request) override {
    if (request.done) return true;
    auto* receive = static_cast<PostedReceive*>(request.handle);
    {
      std::lock_guard lock(mailboxes_[rank_].mutex);
      if (!receive->done) return false;
    }
    const std::size_t received = receive->received;
    outstanding_.erase(receive);
    delete receive;
    request.handle = nullptr;
    request.done = true;
    waiter().complete_receive(request, received);
    return true;
  }

  bool probe(int peer, Tag tag) override {
    InprocWorld::Mailbox& mine = mailboxes_[rank_];
    std::lock_guard lock(mine.mutex);
    return mine.unexpected.count(MatchKey{peer, tag}) > 0;
  }
  const char* describe() const override { return description_.c_str(); }

  void check_link(int peer) override {
    if (peer < 0 || peer >= world_->size() || peer == rank_) {
      throw Error(Status::InternalError, "no transport link to rank " + std::to_string(peer));
    }
  }

  bool wakes_on_delivery() const override { return true; }  // senders notify `delivered`
  // No descriptor: sleep_until_event waits on the mailbox's condition variable instead.
  bool add_wake_fds(std::vector<pollfd>&) override { return true; }

  // Returns at once when something was delivered since the last sleep, so no wake-up is lost
  // between the waiter's last test and this call.
  void sleep_until_event(int /*abort_fd: checked by the waiter every sleep*/, int max_us) override {
    InprocWorld::Mailbox& mine = mailboxes_[rank_];
    std::unique_lock lock(mine.mutex);
    mine.delivered.wait_for(lock, std::chrono::microseconds(max_us),
                            [&] { return mine.deliveries != deliveries_seen_; });
    deliveries_seen_ = mine.deliveries;
  }

 private:
  std::shared_ptr<InprocWorld> world_;
  InprocWorld::Mailbox* mailboxes_;
  int rank_;
  std::uint64_t deliveries_seen_ = 0;
  std::unordered_set<PostedReceive*> outstanding_;  // posted and not yet completed by test()
  std::string description_;
};

// Worlds made by rank 0 of a bootstrapped job, found by the other ranks (threads of the same
// process) under the name rank 0 published.
std::mutex worlds_mutex;
std::map<std::string, std::weak_ptr<InprocWorld>>& published_worlds() {
  static std::map<std::string, std::weak_ptr<InprocWorld>> worlds;
  return worlds;
}

Connection make_registered(Bootstrap& bootstrap, const std::vector<int>&,
                           const TransportOptions& options) {
  std::shared_ptr<InprocWorld> world;
  std::string name;
  if (bootstrap.rank() == 0) {
    world = InprocWorld::create(bootstrap.size());
    name = std::to_string(::getpid()) + "/" + std::to_string(std::random_device{}());
    std::lock_guard lock(worlds_mutex);
    std::erase_if(published_worlds(), [](const auto& entry) { return entry.second.expired(); });
    published_worlds()[name] = world;
  }
  name = bootstrap.allgather("inproc/world", name)[0];
  if (!world) {
    std::lock_guard lock(worlds_mutex);
    auto found = published_worlds().find(name);
    if (found != published_worlds().end()) world = found->second.lock();
  }
  if (!world) {
    throw Error(Status::InvalidArgument,
                "rank " + std::to_string(bootstrap.rank()) +
                    ": COLL_TRANSPORT=inproc joins only ranks that are threads of one process, "
                    "and rank 0 is in another process (use COLL_TRANSPORT=ucx)");
  }
  return {world->make_transport(bootstrap.rank(), options, &bootstrap),
          world->node_resources(bootstrap.rank())};
}

const TransportRegistration kInproc("inproc", make_registered);

}  // namespace

InprocWorld::InprocWorld(int size)
    : mailboxes_(new Mailbox[static_cast<std::size_t>(size)]),
      size_(size),
      peer_memory_enabled_(env_integer("COLL_PEER_MEMORY", 0, 1).value_or(1) != 0) {
  if (size < 2 || env_integer("COLL_NODE_SLOTS", 0, 1).value_or(1) == 0) return;
  // Anonymous pages read as zeros and are touched only where a rank writes: tests make many
  // worlds, and most use the first communicator's slots only.
  const std::size_t bytes = NodeSlots::bytes(size);
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;  // no slots: shm runs direct
  slots_memory_ = std::shared_ptr<void>(memory, [bytes](void* mapped) { ::munmap(mapped, bytes); });
}
InprocWorld::~InprocWorld() = default;

std::shared_ptr<InprocWorld> InprocWorld::create(int size) {
  return std::shared_ptr<InprocWorld>(new InprocWorld(size));
}

int InprocWorld::size() const {
  return size_;
}

NodeResources InprocWorld::node_resources(int rank) const {
  NodeResources node;
  if (peer_memory_enabled_) node.peer_memory = std::make_unique<SharedAddressSpace>(size_);
  if (slots_memory_) node.node_slots = NodeSlots::in_process(slots_memory_, size_, rank);
  return node;
}

std::unique_ptr<Transport> InprocWorld::make_transport(int rank, const TransportOptions& options,
                                                       Bootstrap* bootstrap) {
  if (rank < 0 || rank >= size_) {
    throw Error(Status::InvalidArgument, "inproc transport: rank " + std::to_string(rank) +
                                             " outside a world of " + std::to_string(size_));
  }
  // Every rank of the world is a thread of this process: they share this host's cores.
  TransportOptions on_this_host = options;
  on_this_host.ranks_on_this_host = std::max(options.ranks_on_this_host, size_);
  return std::make_unique<InprocTransport>(shared_from_this(), mailboxes_.get(), rank, on_this_host,
                                           bootstrap);
}

}  // namespace coll
