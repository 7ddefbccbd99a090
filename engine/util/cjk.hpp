// cjk.hpp — which characters are Chinese, Japanese or Korean script, for
// full-text search: those languages do not separate words by spaces, so
// the indexes treat each such character as a word of its own (memory's
// indexed text, session search's tokenizer) and a run of them in a query
// as a phrase of its characters.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace ctxdb::util {

// Decodes the code point at s[i] and advances i; a byte that does not
// start valid UTF-8 (or is cut short) is returned as itself, one byte.
inline uint32_t next_code_point(std::string_view s, size_t &i) {
  auto b = static_cast<unsigned char>(s[i]);
  int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (i + n > s.size()) n = 1;
  uint32_t cp = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

// Han, kana, hangul and their extensions; not CJK punctuation (U+3000 to
// U+303F, the fullwidth forms), which separates words as punctuation does.
inline bool is_cjk(uint32_t cp) {
  struct Range {
    uint32_t lo, hi;
  };
  static constexpr std::array<Range, 14> kRanges{{
      {0x1100, 0x11FF},   // hangul jamo
      {0x2E80, 0x2FDF},   // CJK and Kangxi radicals
      {0x3040, 0x30FF},   // hiragana, katakana
      {0x3100, 0x318F},   // bopomofo, hangul compatibility jamo
      {0x31A0, 0x31FF},   // bopomofo extended, katakana phonetic extensions
      {0x3400, 0x4DBF},   // CJK extension A
      {0x4E00, 0x9FFF},   // CJK unified ideographs
      {0xA960, 0xA97F},   // hangul jamo extended A
      {0xAC00, 0xD7FF},   // hangul syllables, jamo extended B
      {0xF900, 0xFAFF},   // CJK compatibility ideographs
      {0xFF66, 0xFF9F},   // half-width katakana
      {0xFFA0, 0xFFDC},   // half-width hangul
      {0x20000, 0x3FFFF}, // CJK extensions B and later
      {0x1B000, 0x1B16F}, // kana supplement and extended
  }};
  if (cp < 0x1100) return false;
  return std::any_of(kRanges.begin(), kRanges.end(),
                     [cp](Range r) { return cp >= r.lo && cp <= r.hi; });
}

} // namespace ctxdb::util
