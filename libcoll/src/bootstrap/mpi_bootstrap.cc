// Bootstrap under mpirun: addresses are exchanged through MPI itself.
#include <optional>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/mpi_exchange.hpp"

namespace coll {
namespace {

class MpiBootstrap final : public Bootstrap {
 public:
  MpiBootstrap() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided),
                "MPI_Init_thread");
      owns_mpi_ = true;
    }
    exchange_.emplace(MPI_COMM_WORLD);
  }

  ~MpiBootstrap() override {
    if (abandoned_) return;  // MPI_Finalize would wait for peers that may be gone for good
    exchange_.reset();       // frees its communicator while MPI is still up
    if (owns_mpi_) MPI_Finalize();
  }

  // The launcher sees a rank leave without finalizing and ends the job's other ranks.
  void abandon() override { abandoned_ = true; }

  int rank() const override { return exchange_->rank(); }
  int size() const override { return exchange_->size(); }
  std::vector<std::string> allgather(const std::string&, const std::string& mine) override {
    return exchange_->allgather(mine);
  }
  void barrier(const std::string&) override { exchange_->barrier(); }
  std::string describe() const override { return "mpi"; }

 private:
  bool owns_mpi_ = false;
  bool abandoned_ = false;
  std::optional<MpiExchange> exchange_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_mpi_bootstrap() {
  return std::make_unique<MpiBootstrap>();
}

}  // namespace coll
