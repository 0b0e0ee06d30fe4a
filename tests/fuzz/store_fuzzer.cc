// libFuzzer target for the store's wire parser and request handling. The input is a script of
// chunks from three connections: a control byte (low 2 bits: connection 0-2, or 3 for an action
// on the connection the next byte names: hang it up, or, with that byte's high bit set, send the
// hello that answers its challenge, which the fuzzer cannot guess; high 6 bits: chunk length - 1)
// and then the chunk.
// Each connection's bytes go through a frame decoder limited as the server limits it and then
// through the service, as the server does. Nothing may crash, and nothing but the decoder's
// coll::Error for a malformed frame may throw; every frame the service sends must decode.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "bootstrap/store_service.hpp"
#include "bootstrap/store_wire.hpp"
#include "coll/error.hpp"

namespace {

using namespace coll::store;

constexpr int kConnections = 3;
constexpr std::size_t kHelloFrameBytes = 256;  // the server's default

std::map<ConnectionId, std::string> challenges;

void check_reply(ConnectionId to, const std::string& frame) {
  Decoder decoder;
  decoder.feed(frame.data(), frame.size());
  const auto message = decoder.next();
  if (!message || decoder.pending_bytes() != 0) __builtin_trap();
  if (message->op == Op::Challenge) challenges[to] = message->value;
}

struct Connection {
  ConnectionId id = 0;
  Decoder decoder{kHelloFrameBytes};
};

void hang_up(Service& service, Connection& connection, ConnectionId& next_id) {
  service.disconnect(connection.id);
  connection = Connection{};
  connection.id = next_id++;
  service.connected(connection.id);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ServiceLimits limits{.key_bytes = 64, .stored_bytes = 4096, .waits_per_connection = 4};
  Service service("token", kConnections, limits, check_reply);
  ConnectionId next_id = 0;
  Connection connections[kConnections];
  for (auto& connection : connections) {
    connection.id = next_id++;
    service.connected(connection.id);
  }

  std::size_t at = 0;
  while (at < size) {
    const std::uint8_t control = data[at++];
    if ((control & 3) == 3) {
      if (at == size) continue;
      const std::uint8_t action = data[at++];
      Connection& target = connections[(action & 0x7F) % kConnections];
      const std::string rank = std::to_string((action & 0x7F) % kConnections) + "/3";
      const bool refused =
          (action & 0x80) != 0 &&
          service.handle(target.id,
                         {Op::Hello, hello_key("token", challenges[target.id], rank), rank});
      if ((action & 0x80) == 0 || refused) hang_up(service, target, next_id);
      continue;
    }
    Connection& connection = connections[control & 3];
    const std::size_t length = std::min<std::size_t>((control >> 2) + 1, size - at);
    connection.decoder.feed(reinterpret_cast<const char*>(data + at), length);
    at += length;
    while (true) {
      connection.decoder.limit(service.authenticated(connection.id) ? kMaxFrameBytes
                                                                    : kHelloFrameBytes);
      std::optional<Message> message;
      try {
        message = connection.decoder.next();
      } catch (const coll::Error&) {
        hang_up(service, connection, next_id);  // a malformed frame
        break;
      }
      if (!message) break;
      if (service.handle(connection.id, std::move(*message))) {
        hang_up(service, connection, next_id);
        break;
      }
    }
  }
  return 0;
}
