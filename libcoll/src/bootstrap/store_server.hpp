// The job's rendezvous: a key-value store on a TCP port, served by a background thread.
// Only clients that first present the job's random token are served; anything else is dropped.
#pragma once

#include <memory>
#include <string>

namespace coll {

class StoreServer {
 public:
  // Listens on host (port 0: any free port). The token must be presented by every client.
  StoreServer(const std::string& host, int port, std::string token);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  std::string address() const;  // "host:port"
  const std::string& token() const;

  // Pushes an abort message to every connected client (and to every client that connects
  // later): the job is failing, and ranks waiting in a collective should stop with this reason.
  void abort_all(const std::string& reason);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// 32 random hex characters from the kernel's CSPRNG.
std::string make_job_token();

}  // namespace coll
