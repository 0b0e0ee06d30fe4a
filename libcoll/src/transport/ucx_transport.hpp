// The UCX transport: tagged messages over shared memory inside a node and TCP between nodes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "transport/transport.hpp"

namespace coll {

struct UcxOptions {
  std::string local_tls = "sm,self";  // COLL_UCX_LOCAL_TLS
  std::string net_tls = "tcp";        // COLL_UCX_NET_TLS
  std::string net_devices = "lo";     // COLL_UCX_NET_DEVICES
  double timeout_s = 60;              // COLL_TIMEOUT
  int ranks_on_this_host = 1;         // more ranks than cores: yield while polling
};

// Collective over the bootstrap: every rank must construct it with the same node map.
std::unique_ptr<Transport> make_ucx_transport(Bootstrap& bootstrap,
                                              const std::vector<int>& node_of_rank,
                                              const UcxOptions& options);

}  // namespace coll
