// The secret only a job's ranks know, and the keyed digests with which their connections prove
// they belong to the job without sending it (HMAC-SHA-256 over nonces from both ends, so that a
// recorded exchange cannot be replayed). OpenSSL's libcrypto computes them.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace coll {

using Digest = std::array<unsigned char, 32>;

Digest hmac_sha256(std::string_view key, std::string_view message);
// Compares in constant time: how long it takes says nothing of where they differ.
bool same_digest(const Digest& a, const Digest& b);
// `bytes` unpredictable bytes from the kernel's generator.
std::string random_bytes(std::size_t bytes);
// Lowercase hexadecimal, two digits a byte.
std::string to_hex(std::string_view bytes);
std::string to_hex(const Digest& digest);

}  // namespace coll
