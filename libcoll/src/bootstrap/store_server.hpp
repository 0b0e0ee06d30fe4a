// The job's rendezvous: a key-value store on a TCP port, served by a background thread.
// Only clients that first present the job's random token and a free rank are served; anything
// else is dropped. Sockets are non-blocking and every connection's memory is capped, so no
// client, authenticated or not, can stall the store thread or make it hold much memory.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "bootstrap/store_service.hpp"
#include "bootstrap/store_wire.hpp"

namespace coll {

struct StoreLimits {
  // Largest frame before the hello is accepted: an unauthenticated client holds at most this
  // much (plus the frame header) of the store's memory.
  std::size_t hello_frame_bytes = 256;
  double hello_timeout_s = 10;
  std::size_t frame_bytes = store::kMaxFrameBytes;
  // Received bytes not yet decoded plus replies not yet sent, per connection; a client over it
  // (one that does not read its replies) is dropped.
  std::size_t connection_bytes = 2 * store::kMaxFrameBytes + (1u << 20);
  // The same summed over all connections; past it the connection holding the most is dropped.
  std::size_t all_connections_bytes = 256u << 20;
  store::ServiceLimits service;
};

class StoreServer {
 public:
  // Listens on host (port 0: any free port). The token must be presented by every client, with
  // a rank in [0, job_size) (job_size 0: the first client's hello fixes the size).
  StoreServer(const std::string& host, int port, std::string token, int job_size = 0,
              const StoreLimits& limits = {});
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  std::string address() const;  // "host:port"
  const std::string& token() const;

  // Pushes an abort message to every connected client (and to every client that connects
  // later): the job is failing, and ranks waiting in a collective should stop with this reason.
  void abort_all(const std::string& reason);

  // From any thread: the value a client stored under `key`, if any (the launcher reads the
  // ranks' wait records).
  std::optional<std::string> value(const std::string& key) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// 32 random hex characters from the kernel's CSPRNG.
std::string make_job_token();

}  // namespace coll
