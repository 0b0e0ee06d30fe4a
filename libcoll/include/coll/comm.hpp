// coll::Comm: the C++ API. One communicator per process per job; collectives are called by
// every rank in the same order with the same arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "coll/error.hpp"
#include "coll/types.hpp"

namespace coll {

class Comm {
 public:
  // From the environment contract (COLL_RANK, COLL_SIZE, COLL_STORE, COLL_TOKEN, COLL_NODE), or
  // under mpirun from MPI, or else a communicator of one rank.
  static std::unique_ptr<Comm> from_environment();
  // Joins the store at `address` ("host:port") presenting the job's `token`.
  static std::unique_ptr<Comm> from_store(const std::string& address, const std::string& token,
                                          int rank, int size);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const;
  int size() const;
  // The node map: COLL_NODE when set (emulating several nodes on one machine), else the host.
  int node() const;
  int num_nodes() const;
  int local_rank() const;  // position among the ranks of this node
  const std::vector<int>& node_of_rank() const;

  // recv[i] = op over ranks of send[i]. send == recv is in place. `algorithm` empty means the
  // communicator's default (COLL_ALGO, else ring). Throws coll::Error naming this rank, the
  // collective and the peer involved; after an error the communicator refuses further calls.
  void allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                 std::string_view algorithm = {});
  void barrier();

  // Blocking point-to-point messages (for diagnostics such as colltopo --measure); `tag`
  // matches a send to its receive, and both sides must agree on `bytes`.
  void send(const void* data, std::size_t bytes, int peer, std::uint32_t tag);
  void recv(void* data, std::size_t bytes, int peer, std::uint32_t tag);

  // Names of the algorithms allreduce accepts.
  static std::vector<std::string> algorithms();
  std::string describe() const;  // bootstrap, transport and node map, for logs

  struct Impl;

 private:
  explicit Comm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace coll
