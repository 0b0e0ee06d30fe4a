// How the ranks of a job open their TCP connections to each other, and make sure that only the
// job's ranks get in. Each rank listens on its chosen interface and publishes its address and
// host name through the bootstrap; the lower rank of each pair connects from its own address,
// the higher one accepts. A connection belongs to the job once both ends proved they know the
// job's secret: the acceptor sends a fresh nonce, the connector answers with the ranks it links
// (from, to), a nonce of its own and their HMAC under the secret, and the acceptor, having
// checked the digest, that the connection comes from the address the claimed rank published and
// that no connection holds that rank yet, answers with its own HMAC over both nonces. Anything
// else (silence past a second, garbage, a replayed answer, a wrong or duplicate rank) is closed
// with one line at COLL_DEBUG=INFO, and the wait for the real ranks goes on. The listener closes
// once every linked rank is connected.
#pragma once

#include <string>
#include <vector>

#include "bootstrap/socket.hpp"
#include "transport/network_interfaces.hpp"

namespace coll {

class Bootstrap;

struct RendezvousOptions {
  NetworkInterface interface;  // where this rank listens and connects from
  std::string secret;          // the job's (job_secret)
  double timeout_s = 30;       // for every linked rank to connect
  // How long a connection may take to prove it belongs to the job (strangers are dropped then).
  double handshake_s = 1;
};

// Collective over `bootstrap`: one connected, authenticated, blocking socket per rank that
// `linked` names (the same pairs on every rank), invalid for the others. Throws naming the
// ranks, their hosts and the address where a linked rank cannot be reached or does not come.
std::vector<Socket> connect_linked_ranks(Bootstrap& bootstrap, const std::vector<bool>& linked,
                                         const RendezvousOptions& options);

}  // namespace coll
