// The store's request semantics, free of sockets so that they can be tested and fuzzed alone:
// authentication (token, then a rank that is in range and not taken), the key-values, GETs
// waiting for their key, counters, and the abort broadcast. Every request is validated and
// answered; nothing a client sends makes handle() throw.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "bootstrap/store_wire.hpp"

namespace coll::store {

using ConnectionId = std::uint64_t;

struct ServiceLimits {
  std::size_t key_bytes = 4096;            // longest key
  std::size_t stored_bytes = 256u << 20;   // all keys and values together
  std::size_t waits_per_connection = 256;  // GETs one connection may leave waiting
};

class Service {
 public:
  // Queues a frame for a connection; the server owns the sockets.
  using Send = std::function<void(ConnectionId, std::string frame)>;

  // job_size 0: the first accepted hello fixes it (a store started before the job's size is
  // known, as collGetUniqueId's is).
  Service(std::string token, int job_size, ServiceLimits limits, Send send);

  // A new connection: sends it the challenge its hello must answer.
  void connected(ConnectionId connection);
  // Handles one request. Returns why the connection must be closed, or nothing to keep it.
  std::optional<std::string> handle(ConnectionId from, Message&& message);
  // Forgets a closed connection: its rank becomes free and its waiting GETs are dropped.
  void disconnect(ConnectionId connection);

  bool authenticated(ConnectionId connection) const;
  // "rank 3" or "an unauthenticated client", for log lines.
  std::string describe(ConnectionId connection) const;
  // Pushes the reason to every authenticated connection, and to each one that authenticates
  // later; the first reason stays (a rank's Fail or the launcher's, whichever came first).
  void abort(const std::string& reason);
  // The stored value of `key`, if any.
  std::optional<std::string> value(const std::string& key) const;

 private:
  struct Peer {
    bool authenticated = false;
    std::string challenge;  // sent on connect; empty: none yet, so no hello can match
    int rank = -1;
    std::size_t waits = 0;
  };

  std::optional<std::string> hello(ConnectionId from, Peer& peer, const Message& message);
  void get(ConnectionId from, Peer& peer, const Message& message);
  void add(ConnectionId from, const Message& message);
  void reply(ConnectionId to, Op op, const std::string& value);
  // Stores the value and answers the GETs waiting for it; false (nothing changed) when the
  // store's byte limit would be exceeded.
  bool store(const std::string& key, std::string value);

  std::string token_;
  int job_size_;
  ServiceLimits limits_;
  Send send_;
  std::unordered_map<ConnectionId, Peer> peers_;
  std::map<int, ConnectionId> ranks_;  // the rank each authenticated connection holds
  std::map<std::string, std::string> values_;
  std::size_t stored_bytes_ = 0;
  std::multimap<std::string, ConnectionId> waiters_;  // GETs waiting for their key
  std::string abort_reason_;
};

// Strict decimal parse of a whole string into a long long: no sign other than a leading '-',
// no spaces, no overflow.
std::optional<long long> parse_decimal(const std::string& text);

}  // namespace coll::store
