// coll::Exchange over an MPI communicator, for the MPI bootstrap and the MPI interposer:
// point-to-point messages with a deadline, not MPI's blocking collectives.
#pragma once

#include <mpi.h>

#include "coll/exchange.hpp"

namespace coll {

class MpiExchange final : public Exchange {
 public:
  // Works on a private duplicate of `comm`, so that bootstrap messages never match the
  // program's own and the exchange outlives a `comm` being freed. Collective over `comm`; it and
  // every exchange fail (Status::Timeout) after `timeout_s` without progress, naming the ranks
  // not heard from where it can.
  MpiExchange(MPI_Comm comm, double timeout_s);
  ~MpiExchange() override;
  MpiExchange(const MpiExchange&) = delete;
  MpiExchange& operator=(const MpiExchange&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::vector<std::string> allgather(const std::string& mine) override;

 private:
  std::string seconds_text() const;

  double timeout_s_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace coll
