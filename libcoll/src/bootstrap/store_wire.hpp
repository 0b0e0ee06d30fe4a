// The key-value store's wire format: length-prefixed binary frames, safe for any key or value.
// frame = u32 body length (big endian) | op (1 byte) | u32 key length | key | value
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace coll::store {

enum class Op : char {
  Challenge = 'C',  // pushed by the server on connect: value = a fresh nonce
  Hello = 'H',      // key = hello_proof, value = "RANK/SIZE"; must be the first frame
  Set = 'S',
  Get = 'G',  // answered once the key exists
  Add = 'A',  // value = decimal delta; answered with the new value
  Reply = 'R',
  Error = 'E',  // the request was refused; after a refused hello or a bad frame the server hangs up
  Abort = 'X',  // pushed by the server: the job is failing, value says why
  Fail = 'F',   // from a rank: the job cannot go on, value says why; pushed to all as an Abort
};

struct Message {
  Op op;
  std::string key;
  std::string value;
};

// The largest frame body a store accepts from an authenticated client (values are addresses and
// rank descriptions: kilobytes).
inline constexpr std::size_t kMaxFrameBytes = 16u << 20;
inline constexpr std::size_t kFrameHeaderBytes = 4;
// A Fail's reason is cut to this length before it is pushed to every rank.
inline constexpr std::size_t kMaxFailBytes = 4096;
// In the refusal of a hello whose rank another connection holds.
inline constexpr const char* kRankTaken = "is already connected";

std::string encode(const Message& message);

// What proves that a client knows the job's token without sending it: the hello's key is
// "NONCE:PROOF", a fresh nonce of the client's and HMAC-SHA-256 under the token over the server's
// challenge, that nonce and the hello's "RANK/SIZE" (hex). The server's welcome answers with its
// own proof over the same, so that a rank knows it reached the job's store (fresh at both ends:
// a recorded exchange proves nothing to either side).
std::string hello_key(const std::string& token, const std::string& challenge,
                      const std::string& rank_size);
bool hello_key_valid(const std::string& token, const std::string& challenge, const std::string& key,
                     const std::string& rank_size);
std::string welcome_proof(const std::string& token, const std::string& challenge,
                          const std::string& key, const std::string& rank_size);
// Whether two strings are equal, in time that depends on their lengths only.
bool same_text(const std::string& a, const std::string& b);

// Accumulates received bytes and yields complete messages. Throws coll::Error on a frame that
// is larger than the limit, too short or has an unknown op, so a bad client is dropped, not
// trusted; the length is checked before the body is waited for, so a frame over the limit is
// never buffered.
class Decoder {
 public:
  explicit Decoder(std::size_t max_body = kMaxFrameBytes) : max_body_(max_body) {}
  void limit(std::size_t max_body) { max_body_ = max_body; }
  void feed(const char* data, std::size_t bytes);
  std::optional<Message> next();
  // Bytes of memory the decoder holds (received bytes not yet decoded, and spare capacity).
  std::size_t held_bytes() const { return buffer_.capacity(); }
  // Received bytes not yet decoded.
  std::size_t pending_bytes() const { return buffer_.size() - consumed_; }

 private:
  std::string buffer_;
  std::size_t consumed_ = 0;  // bytes at the front of buffer_ already decoded
  std::size_t max_body_;
};

}  // namespace coll::store
