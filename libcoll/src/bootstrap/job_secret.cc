#include "bootstrap/job_secret.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>

#include "bootstrap/bootstrap.hpp"
#include "coll/error.hpp"

namespace coll {

Digest hmac_sha256(std::string_view key, std::string_view message) {
  Digest digest{};
  unsigned int length = 0;
  if (::HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest.data(),
             &length) == nullptr ||
      length != digest.size()) {
    throw Error(Status::InternalError, "HMAC-SHA-256 failed");
  }
  return digest;
}

bool same_digest(const Digest& a, const Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string random_bytes(std::size_t bytes) {
  std::string out(bytes, '\0');
  std::size_t filled = 0;
  while (filled < bytes) {
    const ssize_t n = ::getrandom(out.data() + filled, bytes - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_system_error("getrandom");
    filled += static_cast<std::size_t>(n);
  }
  return out;
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (const char byte : bytes) {
    text.push_back(kDigits[static_cast<unsigned char>(byte) >> 4]);
    text.push_back(kDigits[byte & 15]);
  }
  return text;
}

std::string to_hex(const Digest& digest) {
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string job_secret(Bootstrap& bootstrap) {
  if (auto secret = bootstrap.own_secret()) return *secret;
  constexpr std::size_t kSecretBytes = 32;
  const std::string mine = bootstrap.rank() == 0 ? random_bytes(kSecretBytes) : std::string();
  return bootstrap.allgather("job-secret", mine)[0];
}

}  // namespace coll
