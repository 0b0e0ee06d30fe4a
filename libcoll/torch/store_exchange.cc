#include "store_exchange.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace coll::torch_backend {

StoreExchange::StoreExchange(c10::intrusive_ptr<c10d::Store> store, int rank, int size)
    : store_(std::move(store)), rank_(rank), size_(size) {}

std::vector<std::string> StoreExchange::allgather(const std::string& mine) {
  const std::string prefix = "coll/" + std::to_string(round_++) + "/";
  store_->set(prefix + std::to_string(rank_), std::vector<std::uint8_t>(mine.begin(), mine.end()));
  std::vector<std::string> all;
  for (int rank = 0; rank < size_; ++rank) {
    const auto bytes = store_->get(prefix + std::to_string(rank));
    all.emplace_back(bytes.begin(), bytes.end());
  }
  return all;
}

std::optional<std::string> StoreExchange::rendezvous_host() const {
  c10::intrusive_ptr<c10d::Store> store = store_;
  while (auto* prefixed = dynamic_cast<c10d::PrefixStore*>(store.get())) {
    store = prefixed->getUnderlyingStore();
  }
  if (auto* tcp = dynamic_cast<c10d::TCPStore*>(store.get())) return tcp->getHost();
  return std::nullopt;
}

}  // namespace coll::torch_backend
