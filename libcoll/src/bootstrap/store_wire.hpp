// The key-value store's wire format: length-prefixed binary frames, safe for any key or value.
// frame = u32 body length (big endian) | op (1 byte) | u32 key length | key | value
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace coll::store {

enum class Op : char {
  Hello = 'H',  // key = job token, value = rank; must be the first frame
  Set = 'S',
  Get = 'G',  // answered once the key exists
  Add = 'A',  // value = decimal delta; answered with the new value
  Reply = 'R',
  Error = 'E',  // server refuses (bad token, malformed frame); the connection closes
  Abort = 'X',  // pushed by the server: the job is failing, value says why
};

struct Message {
  Op op;
  std::string key;
  std::string value;
};

inline constexpr std::size_t kMaxFrameBytes = 64u << 20;

std::string encode(const Message& message);

// Accumulates received bytes and yields complete messages. Throws coll::Error on a frame that
// is too large, too short or has an unknown op, so a bad client is dropped, not trusted.
class Decoder {
 public:
  void feed(const char* data, std::size_t bytes) { buffer_.append(data, bytes); }
  std::optional<Message> next();

 private:
  std::string buffer_;
};

}  // namespace coll::store
