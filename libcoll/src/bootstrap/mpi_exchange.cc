// Strings of any length gathered with MPI_Allgather (lengths) then MPI_Allgatherv (bytes).
#include "bootstrap/mpi_exchange.hpp"

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

MpiExchange::MpiExchange(MPI_Comm comm) {
  check_mpi(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiExchange::~MpiExchange() {
  MPI_Comm_free(&comm_);
}

std::vector<std::string> MpiExchange::allgather(const std::string& mine) {
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  check_mpi(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_), "MPI_Allgather");
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
    all.push_back(
        joined.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  }
  return all;
}

void MpiExchange::barrier() {
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
}

}  // namespace coll
