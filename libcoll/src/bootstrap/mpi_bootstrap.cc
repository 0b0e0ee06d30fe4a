// Bootstrap under mpirun: addresses are exchanged through MPI itself.
#include <mpi.h>

#include "bootstrap/bootstrap.hpp"
#include "coll/error.hpp"

namespace coll {

void check_mpi(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(Status::SystemError, std::string(what) + " failed: " + std::string(text, length));
  }
}

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
    check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  ~MpiBootstrap() override {
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> allgather(const std::string&, const std::string& mine) override {
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_),
              "MPI_Allgather");
    std::vector<int> offsets(lengths.size());
    int total = 0;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      offsets[i] = total;
      total += lengths[i];
    }
    std::string joined(static_cast<std::size_t>(total), '\0');
    check_mpi(MPI_Allgatherv(mine.data(), length, MPI_CHAR, joined.data(), lengths.data(),
                             offsets.data(), MPI_CHAR, comm_),
              "MPI_Allgatherv");
    std::vector<std::string> all;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      all.push_back(joined.substr(static_cast<std::size_t>(offsets[i]),
                                  static_cast<std::size_t>(lengths[i])));
    }
    return all;
  }

  void barrier(const std::string&) override { check_mpi(MPI_Barrier(comm_), "MPI_Barrier"); }
  std::string describe() const override { return "mpi"; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  bool owns_mpi_ = false;
};

}  // namespace

std::unique_ptr<Bootstrap> make_mpi_bootstrap() {
  return std::make_unique<MpiBootstrap>();
}

}  // namespace coll
