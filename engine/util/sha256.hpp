// sha256.hpp — SHA-256 (OpenSSL libcrypto) for the hash chain and content
// addresses.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

struct evp_md_ctx_st; // OpenSSL's EVP_MD_CTX, kept out of this header

namespace ctxdb::util {

using Digest = std::array<uint8_t, 32>;

// Incremental hashing; one object may hash many messages (reset() between).
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;

  Sha256 &update(const void *data, size_t len);
  Sha256 &update(std::string_view s) { return update(s.data(), s.size()); }
  Sha256 &update(const Digest &d) { return update(d.data(), d.size()); }
  Digest finish(); // also resets for the next message

private:
  void reset();
  ::evp_md_ctx_st *ctx_;
};

Digest sha256(std::string_view data);

std::string to_hex(const Digest &d);
// prefix followed by the 64 hex digits, in one allocation ("sha256:<hex>").
std::string to_hex(std::string_view prefix, const Digest &d);
// Parses 64 lowercase hex digits; returns false on anything else.
bool from_hex(std::string_view hex, Digest &out);

} // namespace ctxdb::util
