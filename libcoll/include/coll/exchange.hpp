// coll::Exchange: an out-of-band channel the caller already has (MPI, a key-value store, ...),
// through which Comm::from_exchange creates a communicator, much as UCC's OOB callbacks do.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace coll {

class Exchange {
 public:
  virtual ~Exchange() = default;
  // Collective: every rank's `mine`, in rank order. Every rank makes the same calls in the same
  // order; strings may differ in length. Throw (any std::exception) on failure.
  virtual std::vector<std::string> allgather(const std::string& mine) = 0;
  // Collective: returns once every rank has entered. By default an allgather of nothing.
  virtual void barrier() { allgather({}); }
  // The host that serves this exchange (a TCP store's), if there is one: across hosts, libcoll
  // listens on the interface that routes to it. By default none.
  virtual std::optional<std::string> rendezvous_host() const { return std::nullopt; }
};

}  // namespace coll
