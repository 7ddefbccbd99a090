#include "util/base64.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <climits>

namespace ctxdb::util {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool in_alphabet(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

} // namespace

std::optional<std::string> decode_base64(std::string_view text) {
  // EVP_DecodeBlock decodes '=' anywhere as zero bits and stops at no
  // stray character inside, so the shape is checked here first: only the
  // alphabet, then at most two '=' at the very end, in groups of four.
  std::string clean;
  clean.reserve(text.size());
  for (char c : text)
    if (!is_space(c)) clean += c;
  size_t n = clean.size(), pad = 0;
  while (pad < 2 && pad < n && clean[n - 1 - pad] == '=') ++pad;
  if (n % 4 != 0 || n / 4 * 3 > size_t(INT_MAX)) return std::nullopt;
  for (size_t i = 0; i < n - pad; ++i)
    if (!in_alphabet(clean[i])) return std::nullopt;
  std::string out(n / 4 * 3, '\0');
  int got = EVP_DecodeBlock(reinterpret_cast<unsigned char *>(out.data()),
                            reinterpret_cast<const unsigned char *>(clean.data()), int(n));
  if (got < 0 || size_t(got) != out.size()) return std::nullopt;
  out.resize(out.size() - pad); // padding decodes as zero bytes
  return out;
}

std::string encode_base64(std::string_view bytes) {
  std::string out((bytes.size() + 2) / 3 * 4 + 1, '\0'); // EVP_EncodeBlock adds a NUL
  // One call per block of whole 3-byte groups keeps int lengths in range.
  constexpr size_t kBlock = 3 << 20;
  size_t at = 0, written = 0;
  while (at < bytes.size()) {
    size_t n = std::min(kBlock, bytes.size() - at);
    written +=
        size_t(EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data() + written),
                               reinterpret_cast<const unsigned char *>(bytes.data() + at), int(n)));
    at += n;
  }
  out.resize(written);
  return out;
}

} // namespace ctxdb::util
