#include "token/counter.hpp"

namespace ctxdb::token {

namespace {
enum class Kind { kSpace, kAlpha, kDigit, kOther, kNonAscii };

Kind kind_of(unsigned char c) {
  if (c >= 0x80) return Kind::kNonAscii;
  if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return Kind::kSpace;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return Kind::kAlpha;
  if (c >= '0' && c <= '9') return Kind::kDigit;
  return Kind::kOther;
}
} // namespace

// BPE vocabularies give a common word one token (with its leading space),
// split long words every ~4 letters, numbers every 3 digits, and most
// punctuation one token per character; non-ASCII text costs about a token
// per 2 bytes. Runs of whitespace beyond one space are a token each line.
int64_t ApproxCounter::count(std::string_view text) const {
  int64_t tokens = 0;
  size_t i = 0, n = text.size();
  while (i < n) {
    Kind k = kind_of(static_cast<unsigned char>(text[i]));
    size_t j = i + 1;
    while (j < n && kind_of(static_cast<unsigned char>(text[j])) == k) ++j;
    size_t len = j - i;
    switch (k) {
    case Kind::kAlpha: tokens += int64_t((len + 3) / 4); break; // ceil(len/4)
    case Kind::kDigit: tokens += int64_t((len + 2) / 3); break;
    case Kind::kOther: tokens += int64_t(len); break;
    case Kind::kNonAscii: tokens += int64_t((len + 1) / 2); break;
    case Kind::kSpace: {
      // A single space joins the next word's token; newlines and indents
      // are tokens of their own.
      size_t newlines = 0;
      for (size_t p = i; p < j; ++p) newlines += text[p] == '\n';
      tokens += int64_t(newlines) + (len - newlines > 1 ? 1 : 0);
      break;
    }
    }
    i = j;
  }
  return tokens;
}

const Counter &default_counter() {
  static const ApproxCounter counter;
  return counter;
}

} // namespace ctxdb::token
