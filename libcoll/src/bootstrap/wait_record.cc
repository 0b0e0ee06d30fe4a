#include "bootstrap/wait_record.hpp"

#include <charconv>

namespace coll {

std::string wait_key(int rank) {
  return "wait/" + std::to_string(rank);
}

std::string wait_record(int peer, bool sending) {
  return std::to_string(peer) + (sending ? " sending to" : " receiving from");
}

std::optional<int> waited_peer(const std::string& record) {
  int peer = -1;
  const char* end = record.data() + record.size();
  const auto [stop, error] = std::from_chars(record.data(), end, peer);
  if (error != std::errc() || peer < 0 || (stop != end && *stop != ' ')) return std::nullopt;
  return peer;
}

}  // namespace coll
