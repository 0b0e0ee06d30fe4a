// Runs an algorithm over in-process ranks (threads) on a given node map, counting the messages
// each rank sends: for tests of which messages an algorithm's choices lead to.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/registry.hpp"
#include "coll/buffer_pool.hpp"
#include "exact_data.hpp"
#include "transport/inproc_transport.hpp"

namespace coll::testing {

// Forwards to a transport and records the messages sent through it.
class MeasuredTransport final : public coll::Transport {
 public:
  MeasuredTransport(std::unique_ptr<coll::Transport> inner, const coll::TransportOptions& options)
      : Transport(nullptr, options), inner_(std::move(inner)) {}
  Request send(int peer, coll::Tag tag, const void* data, std::size_t bytes) override {
    largest_message = std::max(largest_message, bytes);
    ++messages;
    return inner_->send(peer, tag, data, bytes);
  }
  Request recv(int peer, coll::Tag tag, void* data, std::size_t bytes) override {
    return inner_->recv(peer, tag, data, bytes);
  }
  Request recv_up_to(int peer, coll::Tag tag, void* data, std::size_t capacity) override {
    return inner_->recv_up_to(peer, tag, data, capacity);
  }
  bool progress() override { return inner_->progress(); }
  bool test(Request& request) override { return inner_->test(request); }
  bool probe(int peer, coll::Tag tag) override { return inner_->probe(peer, tag); }
  void check_link(int peer) override { inner_->check_link(peer); }
  bool add_wake_fds(std::vector<pollfd>& fds) override { return inner_->add_wake_fds(fds); }
  bool wakes_on_delivery() const override { return inner_->wakes_on_delivery(); }
  void sleep_until_event(int abort_fd, int max_us) override {
    inner_->sleep_until_event(abort_fd, max_us);
  }
  const char* describe() const override { return inner_->describe(); }

  std::size_t largest_message = 0;
  std::size_t messages = 0;

 private:
  std::unique_ptr<coll::Transport> inner_;
};

struct Outcome {
  std::size_t wrong = 0;
  std::size_t largest_message = 0;
  std::size_t messages = 0;
};

// Runs `algorithm` over `node_of_rank.size()` threads, in place on rank 0 and out of place
// elsewhere, under `tuning` and, where given, the communicator's `cost_model`; wrong elements and
// messages summed over ranks, largest message of any rank.
inline Outcome run_on_threads(const char* algorithm, const std::vector<int>& node_of_rank,
                              std::size_t count, const coll::Tuning& tuning = {},
                              const coll::Selector* cost_model = nullptr) {
  const int ranks = static_cast<int>(node_of_rank.size());
  const auto world = coll::InprocWorld::create(ranks);
  std::vector<Outcome> outcomes(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      coll::TransportOptions options;
      options.timeout_s = 30;
      options.ranks_on_this_host = ranks;
      MeasuredTransport transport(world->make_transport(rank, options), options);
      const coll::NodeResources node = world->node_resources(rank);
      coll::BufferPool pool;
      coll::Group group;
      for (int r = 0; r < ranks; ++r) group.ranks.push_back(r);
      group.me = rank;
      std::vector<float> send(count), recv(count);
      collbench::fill_input(coll::DataType::Float32, coll::ReduceOp::Sum, rank, send.data(), count);
      float* out = rank == 0 ? send.data() : recv.data();
      const coll::CollectiveContext context{
          transport, pool,    group,      node_of_rank, coll::TagSpace(1, 0),
          tuning,    nullptr, cost_model, &node};
      coll::find_algorithm(algorithm)->run(
          context, {send.data(), out, count, coll::DataType::Float32, coll::ReduceOp::Sum});
      auto& outcome = outcomes[static_cast<std::size_t>(rank)];
      outcome.wrong =
          collbench::count_wrong(coll::DataType::Float32, coll::ReduceOp::Sum, ranks, out, count);
      outcome.largest_message = transport.largest_message;
      outcome.messages = transport.messages;
    });
  }
  for (auto& thread : threads) thread.join();
  Outcome total;
  for (const auto& outcome : outcomes) {
    total.wrong += outcome.wrong;
    total.largest_message = std::max(total.largest_message, outcome.largest_message);
    total.messages += outcome.messages;
  }
  return total;
}

}  // namespace coll::testing
