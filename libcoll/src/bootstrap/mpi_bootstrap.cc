// Bootstrap under mpirun: addresses are exchanged through MPI itself.
#include <atomic>
#include <cstdlib>
#include <memory>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/mpi_exchange.hpp"
#include "coll/error.hpp"

namespace coll {
namespace {

// MPI is initialized once per process and cannot be again after MPI_Finalize, while a process
// makes and destroys communicators as it likes (and re-creates one after an abort): the MPI
// libcoll initialized is finalized when the process exits, unless the last communicator broke
// and none was made since (MPI_Finalize would then wait for peers that may be gone for good;
// the launcher sees the rank leave without finalizing and ends the job's other ranks).
class MpiLifetime {
 public:
  static MpiLifetime& of_process() {
    static MpiLifetime lifetime;
    return lifetime;
  }

  void initialize() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return;
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided),
              "MPI_Init_thread");
    std::atexit([] { of_process().finalize(); });
  }
  // A communicator that completed its wire-up: every peer was there.
  void peers_reached() { abandoned_ = false; }
  void abandon() { abandoned_ = true; }

 private:
  void finalize() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && !abandoned_) MPI_Finalize();
  }

  std::atomic<bool> abandoned_{false};
};

// An exchange that failed leaves peers that are gone, or messages nobody will take:
// MPI_Finalize would wait for them.
template <typename Step>
auto guarded(Step&& step) {
  try {
    return step();
  } catch (const Error&) {
    MpiLifetime::of_process().abandon();
    throw;
  }
}

class MpiBootstrap final : public Bootstrap {
 public:
  explicit MpiBootstrap(double timeout_s) {
    MpiLifetime::of_process().initialize();
    // Collective: returns once every rank has come.
    exchange_ = guarded([&] { return std::make_unique<MpiExchange>(MPI_COMM_WORLD, timeout_s); });
    MpiLifetime::of_process().peers_reached();
  }

  ~MpiBootstrap() override {
    if (abandoned_) (void)exchange_.release();  // freeing it may wait for gone peers
  }

  void abandon() override {
    abandoned_ = true;
    MpiLifetime::of_process().abandon();
  }

  int rank() const override { return exchange_->rank(); }
  int size() const override { return exchange_->size(); }
  std::vector<std::string> allgather(const std::string&, const std::string& mine) override {
    return guarded([&] { return exchange_->allgather(mine); });
  }
  void barrier(const std::string&) override {
    guarded([&] { exchange_->barrier(); });
  }
  std::string describe() const override { return "mpi"; }

 private:
  std::unique_ptr<MpiExchange> exchange_;
  bool abandoned_ = false;
};

}  // namespace

std::unique_ptr<Bootstrap> make_mpi_bootstrap(double timeout_s) {
  return std::make_unique<MpiBootstrap>(timeout_s);
}

}  // namespace coll
