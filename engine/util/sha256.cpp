#include "util/sha256.hpp"

#include "error.hpp"

#include <openssl/evp.h>

namespace ctxdb::util {

namespace {
// Fetching the algorithm once avoids OpenSSL 3's implicit fetch per digest.
const EVP_MD *sha256_md() {
  static const EVP_MD *md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (!md) throw Error(Code::kInternal, "OpenSSL has no SHA256");
  return md;
}
} // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) throw Error(Code::kNoMem, "cannot allocate a SHA-256 context");
  reset();
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_); }

void Sha256::reset() {
  if (EVP_DigestInit_ex(ctx_, sha256_md(), nullptr) != 1)
    throw Error(Code::kInternal, "EVP_DigestInit_ex failed");
}

Sha256 &Sha256::update(const void *data, size_t len) {
  if (len && EVP_DigestUpdate(ctx_, data, len) != 1)
    throw Error(Code::kInternal, "EVP_DigestUpdate failed");
  return *this;
}

Digest Sha256::finish() {
  Digest d{};
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_, d.data(), &n) != 1 || n != d.size())
    throw Error(Code::kInternal, "EVP_DigestFinal_ex failed");
  reset();
  return d;
}

Digest sha256(std::string_view data) {
  thread_local Sha256 hasher;
  return hasher.update(data).finish();
}

std::string to_hex(const Digest &d) { return to_hex({}, d); }

std::string to_hex(std::string_view prefix, const Digest &d) {
  static const char kHex[] = "0123456789abcdef";
  std::string s(prefix.size() + 64, '0');
  prefix.copy(s.data(), prefix.size());
  char *out = s.data() + prefix.size();
  for (size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 15];
  }
  return s;
}

bool from_hex(std::string_view hex, Digest &out) {
  if (hex.size() != 64) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < 32; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

} // namespace ctxdb::util
