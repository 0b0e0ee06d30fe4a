// Bootstrap through the launcher's key-value store.
#include <map>
#include <mutex>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/job_secret.hpp"
#include "bootstrap/socket.hpp"
#include "bootstrap/store_client.hpp"
#include "bootstrap/wait_record.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

// Keys of the n-th communicator a rank makes on one store start with "comm<n>/": every rank
// makes its communicators in the same order, so their n agree, and a communicator created after
// another was destroyed does not read the first one's addresses. Counted per rank, as one process
// may hold several ranks (threads, COLL_TRANSPORT=inproc).
std::string next_key_prefix(const std::string& address, const std::string& token, int rank) {
  static std::mutex mutex;
  static std::map<std::string, int> made;
  std::lock_guard lock(mutex);
  return "comm" + std::to_string(made[address + "/" + token + "/" + std::to_string(rank)]++) + "/";
}

class StoreBootstrap final : public Bootstrap {
 public:
  StoreBootstrap(const std::string& address, const std::string& token, int rank, int size,
                 double timeout_s)
      : client_(address, token, rank, size, timeout_s),
        rank_(rank),
        size_(size),
        address_(address),
        token_(token),
        key_prefix_(next_key_prefix(address, token, rank)) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> allgather(const std::string& name, const std::string& mine) override {
    const std::string key = key_prefix_ + name + "/";
    client_.set(key + std::to_string(rank_), mine);
    std::vector<std::string> all(static_cast<std::size_t>(size_));
    for (int peer = 0; peer < size_; ++peer) {
      all[static_cast<std::size_t>(peer)] =
          peer == rank_ ? mine
                        : client_.get(key + std::to_string(peer),
                                      "rank " + std::to_string(peer) + " to join (" + name + ")");
    }
    return all;
  }

  void barrier(const std::string& name) override { allgather(name, ""); }

  int abort_fd() const override { return client_.fd(); }
  std::optional<std::string> abort_reason() override { return client_.poll_abort(); }
  // Best effort: a store that is gone has nothing to tell the others any more.
  void fail_job(const std::string& reason) override {
    try {
      client_.fail(reason);
    } catch (const Error&) {
    }
  }
  void publish_wait(const std::string& record) override {
    try {
      client_.set(wait_key(rank_), record);
    } catch (const Error&) {
    }
  }
  std::string describe() const override { return "store " + address_; }
  std::optional<std::string> rendezvous_host() const override {
    return split_host_port(address_, "COLL_STORE").first;
  }
  // Derived from the token, which only the job's ranks know; the digest never leaves the rank.
  std::optional<std::string> own_secret() const override {
    const Digest key = hmac_sha256(token_, "libcoll job secret");
    return std::string(key.begin(), key.end());
  }

 private:
  StoreClient client_;
  int rank_;
  int size_;
  std::string address_;
  std::string token_;
  std::string key_prefix_;
};

class SingleBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> allgather(const std::string&, const std::string& mine) override {
    return {mine};
  }
  void barrier(const std::string&) override {}
  std::string describe() const override { return "single process"; }
};

}  // namespace

std::unique_ptr<Bootstrap> make_store_bootstrap(const std::string& address,
                                                const std::string& token, int rank, int size,
                                                double timeout_s) {
  if (size < 1 || rank < 0 || rank >= size) {
    throw Error(
        Status::InvalidArgument,
        "rank " + std::to_string(rank) + " is not within a job of size " + std::to_string(size));
  }
  return std::make_unique<StoreBootstrap>(address, token, rank, size, timeout_s);
}

std::unique_ptr<Bootstrap> make_single_bootstrap() {
  return std::make_unique<SingleBootstrap>();
}

}  // namespace coll
