// The Bootstrap interface over a caller's coll::Exchange (Comm::from_exchange).
#include <exception>

#include "bootstrap/bootstrap.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

class ExchangeBootstrap final : public Bootstrap {
 public:
  ExchangeBootstrap(int rank, int size, std::unique_ptr<Exchange> exchange)
      : rank_(rank), size_(size), exchange_(std::move(exchange)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> allgather(const std::string& name, const std::string& mine) override {
    std::vector<std::string> all;
    try {
      all = exchange_->allgather(mine);
    } catch (const std::exception& error) {
      throw Error(Status::SystemError, failure(name, error.what()));
    }
    if (all.size() != static_cast<std::size_t>(size_)) {
      throw Error(Status::SystemError,
                  failure(name, "the exchange returned " + std::to_string(all.size()) +
                                    " strings for " + std::to_string(size_) + " ranks"));
    }
    return all;
  }

  void barrier(const std::string& name) override {
    try {
      exchange_->barrier();
    } catch (const std::exception& error) {
      throw Error(Status::SystemError, failure(name, error.what()));
    }
  }

  std::string describe() const override { return "caller's exchange"; }
  std::optional<std::string> rendezvous_host() const override {
    return exchange_->rendezvous_host();
  }

 private:
  std::string failure(const std::string& name, const std::string& why) const {
    return "rank " + std::to_string(rank_) + ": bootstrap exchange '" + name + "' failed: " + why;
  }

  int rank_;
  int size_;
  std::unique_ptr<Exchange> exchange_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_exchange_bootstrap(int rank, int size,
                                                   std::unique_ptr<Exchange> exchange) {
  if (size < 1 || rank < 0 || rank >= size || exchange == nullptr) {
    throw Error(Status::InvalidArgument,
                "Comm::from_exchange: invalid rank " + std::to_string(rank) + " of size " +
                    std::to_string(size) + (exchange ? "" : " or null exchange"));
  }
  return std::make_unique<ExchangeBootstrap>(rank, size, std::move(exchange));
}

}  // namespace coll
