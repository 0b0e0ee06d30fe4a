// coll::Exchange over torch's c10d::Store, so that init_process_group's rendezvous (TCPStore,
// FileStore, ...) bootstraps the coll backend.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include "coll/exchange.hpp"

namespace coll::torch_backend {

class StoreExchange final : public Exchange {
 public:
  StoreExchange(c10::intrusive_ptr<c10d::Store> store, int rank, int size);
  // Round k: set "coll/k/<rank>", then get every rank's key (Store::get waits for it).
  std::vector<std::string> allgather(const std::string& mine) override;
  // The TCPStore's host (under the PrefixStores init_process_group and new_group wrap it in).
  std::optional<std::string> rendezvous_host() const override;

 private:
  c10::intrusive_ptr<c10d::Store> store_;
  int rank_;
  int size_;
  std::uint64_t round_ = 0;
};

}  // namespace coll::torch_backend
