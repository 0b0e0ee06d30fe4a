// One UCX context and worker configured for one link class: shared memory between ranks of a
// node, or TCP on chosen devices between nodes. Separate contexts keep emulated-node traffic
// off shared memory (UCX would otherwise pick /dev/shm even across network namespaces).
#pragma once

#include <ucp/api/ucp.h>

#include <string>
#include <utility>
#include <vector>

namespace coll {

// Transport settings applied on top of the environment's, by UCX's short name ("SNDBUF" for
// UCX_TCP_SNDBUF): UCX gives them to every transport of the context that has such a setting.
using UcxSettings = std::vector<std::pair<std::string, std::string>>;

class UcxWorker {
 public:
  // `tls` and `net_devices` become this context's UCX_TLS and UCX_NET_DEVICES.
  UcxWorker(const std::string& tls, const std::string& net_devices,
            const UcxSettings& settings = {});
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  ucp_worker_h get() const { return worker_; }
  int event_fd() const { return event_fd_; }
  const std::string& address() const { return address_; }  // opaque bytes for peers
  const std::string& tls() const { return tls_; }

  // Arms the event fd; false when events are already pending (progress again, do not sleep).
  bool arm();
  // Progresses until every operation posted on this worker has completed, for at most
  // max_seconds; false when some have not.
  bool drain(double max_seconds);

 private:
  ucp_context_h context_ = nullptr;
  ucp_worker_h worker_ = nullptr;
  int event_fd_ = -1;
  std::string address_;
  std::string tls_;
};

// While alive, UCX's default warnings are off. Destroying a worker after a failure makes UCX
// warn about every request and message a failed peer left unfinished (memory it frees anyway);
// a screen of those would bury the error that matters. A level chosen with UCX_LOG_LEVEL stays.
class QuietUcxWarnings {
 public:
  QuietUcxWarnings();
  ~QuietUcxWarnings();
  QuietUcxWarnings(const QuietUcxWarnings&) = delete;
  QuietUcxWarnings& operator=(const QuietUcxWarnings&) = delete;

 private:
  int saved_level_;
};

// Throws coll::Error for a failed UCX status, naming what was attempted.
void check_ucx(ucs_status_t status, const std::string& what);

}  // namespace coll
