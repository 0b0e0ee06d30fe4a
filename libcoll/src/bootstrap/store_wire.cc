#include "bootstrap/store_wire.hpp"

#include "bootstrap/job_secret.hpp"
#include "coll/error.hpp"

namespace coll::store {
namespace {

// A decoder that held a large frame gives its memory back once the frame is decoded.
constexpr std::size_t kKeptCapacityBytes = 64u << 10;

void put_u32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

std::uint32_t get_u32(const std::string& in, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(in[at + i]);
  return value;
}

bool known_op(char op) {
  switch (static_cast<Op>(op)) {
    case Op::Challenge:
    case Op::Hello:
    case Op::Set:
    case Op::Get:
    case Op::Add:
    case Op::Reply:
    case Op::Error:
    case Op::Abort:
    case Op::Fail:
      return true;
  }
  return false;
}

}  // namespace

namespace {

constexpr std::size_t kClientNonceBytes = 16;

// The client's nonce in a hello's key ("NONCE:PROOF"); empty when the key has none.
std::string client_nonce(const std::string& key) {
  const auto colon = key.find(':');
  return colon == std::string::npos ? std::string() : key.substr(0, colon);
}

std::string proof(const std::string& token, const std::string& role, const std::string& challenge,
                  const std::string& nonce, const std::string& rank_size) {
  return to_hex(hmac_sha256(token, role + "|" + challenge + "|" + nonce + "|" + rank_size));
}

}  // namespace

std::string hello_key(const std::string& token, const std::string& challenge,
                      const std::string& rank_size) {
  const std::string nonce = to_hex(random_bytes(kClientNonceBytes));
  return nonce + ":" + proof(token, "store hello", challenge, nonce, rank_size);
}

bool hello_key_valid(const std::string& token, const std::string& challenge, const std::string& key,
                     const std::string& rank_size) {
  const std::string nonce = client_nonce(key);
  if (nonce.empty() || challenge.empty()) return false;
  return same_text(key, nonce + ":" + proof(token, "store hello", challenge, nonce, rank_size));
}

std::string welcome_proof(const std::string& token, const std::string& challenge,
                          const std::string& key, const std::string& rank_size) {
  return proof(token, "store welcome", challenge, client_nonce(key), rank_size);
}

bool same_text(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

std::string encode(const Message& message) {
  std::string out;
  const std::size_t body = 1 + 4 + message.key.size() + message.value.size();
  out.reserve(kFrameHeaderBytes + body);
  put_u32(out, static_cast<std::uint32_t>(body));
  out.push_back(static_cast<char>(message.op));
  put_u32(out, static_cast<std::uint32_t>(message.key.size()));
  out += message.key;
  out += message.value;
  return out;
}

void Decoder::feed(const char* data, std::size_t bytes) {
  buffer_.erase(0, consumed_);
  consumed_ = 0;
  buffer_.append(data, bytes);
}

std::optional<Message> Decoder::next() {
  if (pending_bytes() < kFrameHeaderBytes) return std::nullopt;
  const std::uint32_t body = get_u32(buffer_, consumed_);
  if (body < 5 || body > max_body_) {
    throw Error(Status::InvalidUsage, "malformed store frame: body of " + std::to_string(body) +
                                          " bytes (limit " + std::to_string(max_body_) + ")");
  }
  if (pending_bytes() < kFrameHeaderBytes + std::size_t{body}) return std::nullopt;
  const std::size_t start = consumed_ + kFrameHeaderBytes;
  const char op = buffer_[start];
  const std::uint32_t key_bytes = get_u32(buffer_, start + 1);
  if (!known_op(op) || key_bytes > body - 5) {
    throw Error(Status::InvalidUsage, "malformed store frame: bad op or key length");
  }
  Message message{static_cast<Op>(op), buffer_.substr(start + 5, key_bytes),
                  buffer_.substr(start + 5 + key_bytes, body - 5 - key_bytes)};
  consumed_ += kFrameHeaderBytes + std::size_t{body};
  if (consumed_ == buffer_.size()) {
    consumed_ = 0;
    if (buffer_.capacity() > kKeptCapacityBytes) {
      std::string().swap(buffer_);
    } else {
      buffer_.clear();
    }
  }
  return message;
}

}  // namespace coll::store
