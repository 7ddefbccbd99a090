#include "artifact/text.hpp"

#include <cstring>

namespace ctxdb::artifact {

namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

} // namespace

int64_t count_newlines(std::string_view s) {
  // Eight bytes at a time: a byte equal to '\n' becomes 0x80 in `hit`
  // (the exact has-zero-byte test on s ^ 0x0a0a…), then counted. Logs
  // have a newline every few dozen bytes, where memchr per line is slower.
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  constexpr uint64_t kLow7 = 0x7f7f7f7f7f7f7f7full, kNl = kOnes * '\n';
  const char *p = s.data();
  size_t n = s.size(), i = 0;
  int64_t count = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    uint64_t x = w ^ kNl;
    uint64_t hit = ~(((x & kLow7) + kLow7) | x) & kHigh;
    // One bit per hit byte, summed by a multiply into the top byte (no
    // POPCNT: the library is built for any x86-64).
    count += int64_t(((hit >> 7) * kOnes) >> 56);
  }
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}

int64_t count_lines(std::string_view s) {
  return count_newlines(s) + (!s.empty() && s.back() != '\n' ? 1 : 0);
}

size_t utf8_cut_down(std::string_view s, size_t at) {
  if (at >= s.size()) return s.size();
  for (size_t back = 0; back < 3 && at > 0 && continuation(s[at]); ++back) --at;
  return at;
}

size_t utf8_cut_up(std::string_view s, size_t at) {
  for (size_t step = 0; step < 3 && at < s.size() && continuation(s[at]); ++step) ++at;
  return at;
}

} // namespace ctxdb::artifact
