// How ranks find each other before any transport exists: exchange small strings, synchronize,
// and hear that the job is being aborted.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "coll/exchange.hpp"

namespace coll {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `mine`, in rank order. `name` must be unique per exchange within the job.
  virtual std::vector<std::string> allgather(const std::string& name, const std::string& mine) = 0;
  virtual void barrier(const std::string& name) = 0;
  // A descriptor that becomes readable when the job is being aborted (-1 when there is none),
  // and the reason once it has (non-blocking).
  virtual int abort_fd() const { return -1; }
  virtual std::optional<std::string> abort_reason() { return std::nullopt; }
  // Best effort and prompt: every rank's abort_reason() becomes `reason` (the first one stays).
  virtual void fail_job(const std::string& reason) { (void)reason; }
  // Best effort and non-blocking, called only when a wait has lasted a while: tells the job what
  // this rank waits on (its WaitRecord text), or that it waits no more (""), so that a stall can
  // be traced to the rank that holds it up (the launcher does, see docs/reliability.md).
  virtual void publish_wait(const std::string& record) { (void)record; }
  // Where this rank's bootstrap came from, for diagnostics ("store 127.0.0.1:4567", "mpi").
  virtual std::string describe() const = 0;
  // The host of the job's rendezvous (the store's), when it has one: ranks on other hosts
  // listen on the interface that routes to it.
  virtual std::optional<std::string> rendezvous_host() const { return std::nullopt; }
  // The job failed and peers may be gone or unreachable: closing must not wait for them.
  virtual void abandon() {}
  // A secret every rank of the job knows and that never crossed the network, where the
  // bootstrap has one (the store's token); otherwise none, and job_secret makes one.
  virtual std::optional<std::string> own_secret() const { return std::nullopt; }
};

// The job's secret (see bootstrap/job_secret.hpp): the bootstrap's own, else one that rank 0
// draws and hands to the others through the bootstrap, which then protects it (MPI's channels,
// the caller's exchange). Collective.
std::string job_secret(Bootstrap& bootstrap);

// The environment contract: COLL_RANK, COLL_SIZE, COLL_STORE=host:port and COLL_TOKEN when set;
// otherwise OpenMPI's rank variables (under mpirun); otherwise a single rank.
std::unique_ptr<Bootstrap> bootstrap_from_environment(double timeout_s);

std::unique_ptr<Bootstrap> make_store_bootstrap(const std::string& address,
                                                const std::string& token, int rank, int size,
                                                double timeout_s);
std::unique_ptr<Bootstrap> make_mpi_bootstrap(double timeout_s);
// Throws a SystemError naming `what` and MPI's message unless `code` is MPI_SUCCESS (for the
// MPI bootstrap and the native MPI algorithm).
void check_mpi(int code, const char* what);
std::unique_ptr<Bootstrap> make_single_bootstrap();
// Over the caller's exchange (Comm::from_exchange); throws InvalidArgument on a bad rank/size.
std::unique_ptr<Bootstrap> make_exchange_bootstrap(int rank, int size,
                                                   std::unique_ptr<Exchange> exchange);

}  // namespace coll
