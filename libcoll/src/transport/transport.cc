#include "transport/transport.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <functional>

#include "coll/error.hpp"
#include "core/usable_cpus.hpp"
#include "transport/waiter.hpp"

namespace coll {

bool TransportOptions::ranks_outnumber_cores() const {
  return ranks_on_this_host * threads_per_rank > usable_cpus();
}

bool TransportOptions::links_to(const std::vector<int>& node_of_rank, int me, int peer) const {
  if (peer == me) return false;
  const bool same_node =
      node_of_rank[static_cast<std::size_t>(peer)] == node_of_rank[static_cast<std::size_t>(me)];
  return links == Links::all || (links == Links::node) == same_node;
}

bool TransportOptions::spans_hosts() const {
  return std::adjacent_find(host_of_rank.begin(), host_of_rank.end(), std::not_equal_to<>()) !=
         host_of_rank.end();
}

std::string TransportOptions::rank_name(int rank) const {
  std::string name = "rank " + std::to_string(rank);
  if (rank >= 0 && rank < static_cast<int>(host_name_of_rank.size())) {
    name += " (" + host_name_of_rank[static_cast<std::size_t>(rank)] + ")";
  }
  return name;
}

Transport::Transport(Bootstrap* bootstrap, const TransportOptions& options)
    : waiter_(std::make_unique<Waiter>(*this, bootstrap, options)) {}

Transport::~Transport() = default;

void Transport::wait_all(std::span<Request> requests) {
  waiter_->wait_all(requests);
}

void Transport::wait_for(WaitCondition& condition) {
  waiter_->wait_for(condition);
}

std::string Transport::fail_job(const std::string& reason) {
  return waiter_->fail_job(reason);
}

void Transport::sleep_until_event(int abort_fd, int max_us) {
  sleep_fds_.clear();
  if (!add_wake_fds(sleep_fds_)) return;
  if (abort_fd >= 0) sleep_fds_.push_back({abort_fd, POLLIN, 0});
  const timespec timeout{max_us / 1000000, (max_us % 1000000) * 1000L};
  ::ppoll(sleep_fds_.data(), sleep_fds_.size(), &timeout, nullptr);
}

void Transport::mark_failed(const std::string& reason) {
  {
    std::lock_guard lock(failure_mutex_);
    if (failure_reason_.empty()) failure_reason_ = reason;
  }
  failed_.store(true, std::memory_order_release);
}

std::string Transport::failure_reason() const {
  std::lock_guard lock(failure_mutex_);
  return failure_reason_;
}

void Transport::interrupt(const std::string& reason) {
  std::call_once(interrupt_once_, [&] {
    interrupt_reason_ = reason;
    interrupted_.store(true, std::memory_order_release);
  });
}

void Transport::check_interrupt() const {
  if (interrupted()) throw Error(Status::InvalidUsage, interrupt_reason_);
}

}  // namespace coll
