#include "bootstrap/store_wire.hpp"

#include "coll/error.hpp"

namespace coll::store {
namespace {

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
    case Op::Hello:
    case Op::Set:
    case Op::Get:
    case Op::Add:
    case Op::Reply:
    case Op::Error:
    case Op::Abort:
      return true;
  }
  return false;
}

}  // namespace

std::string encode(const Message& message) {
  std::string out;
  const std::size_t body = 1 + 4 + message.key.size() + message.value.size();
  out.reserve(4 + body);
  put_u32(out, static_cast<std::uint32_t>(body));
  out.push_back(static_cast<char>(message.op));
  put_u32(out, static_cast<std::uint32_t>(message.key.size()));
  out += message.key;
  out += message.value;
  return out;
}

std::optional<Message> Decoder::next() {
  if (buffer_.size() < 4) return std::nullopt;
  const std::uint32_t body = get_u32(buffer_, 0);
  if (body < 5 || body > kMaxFrameBytes) {
    throw Error(Status::InvalidUsage,
                "malformed store frame: body of " + std::to_string(body) + " bytes");
  }
  if (buffer_.size() < 4 + std::size_t{body}) return std::nullopt;
  const char op = buffer_[4];
  const std::uint32_t key_bytes = get_u32(buffer_, 5);
  if (!known_op(op) || key_bytes > body - 5) {
    throw Error(Status::InvalidUsage, "malformed store frame: bad op or key length");
  }
  Message message{static_cast<Op>(op), buffer_.substr(9, key_bytes),
                  buffer_.substr(9 + key_bytes, body - 5 - key_bytes)};
  buffer_.erase(0, 4 + std::size_t{body});
  return message;
}

}  // namespace coll::store
