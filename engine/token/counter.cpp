#include "token/counter.hpp"

#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ctxdb::token {

namespace {

// The byte classes of a chunk of up to 64 bytes, one bit per byte.
struct Masks {
  uint64_t alpha = 0, digit = 0, blank = 0, newline = 0, high = 0, valid = 0;
};

Masks classify_scalar(const unsigned char *p, size_t n) {
  Masks m;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = p[i];
    uint64_t bit = uint64_t{1} << i;
    if (c >= 0x80)
      m.high |= bit;
    else if (uint8_t((c | 0x20) - 'a') < 26)
      m.alpha |= bit;
    else if (uint8_t(c - '0') < 10)
      m.digit |= bit;
    else if (c == ' ' || c == '\t')
      m.blank |= bit;
    else if (c == '\n' || c == '\r')
      m.newline |= bit;
  }
  m.valid = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  return m;
}

#if defined(__SSE2__)
// Bytes in [lo, lo+span) as a 16-bit mask, by an unsigned range test done
// with signed compares on bytes shifted by 0x80.
inline uint64_t in_range(__m128i v, unsigned char lo, unsigned char span) {
  const __m128i bias = _mm_set1_epi8(char(0x80));
  __m128i shifted = _mm_xor_si128(_mm_sub_epi8(v, _mm_set1_epi8(char(lo))), bias);
  __m128i limit = _mm_xor_si128(_mm_set1_epi8(char(span)), bias);
  return uint64_t(unsigned(_mm_movemask_epi8(_mm_cmplt_epi8(shifted, limit))));
}

inline uint64_t equal(__m128i v, char c) {
  return uint64_t(unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)))));
}

Masks classify64(const unsigned char *p) {
  Masks m;
  for (int k = 0; k < 4; ++k) {
    __m128i v;
    std::memcpy(&v, p + 16 * k, 16);
    int shift = 16 * k;
    uint64_t high = uint64_t(unsigned(_mm_movemask_epi8(v)));
    __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
    m.high |= high << shift;
    m.alpha |= (in_range(folded, 'a', 26) & ~high) << shift;
    m.digit |= in_range(v, '0', 10) << shift;
    m.blank |= (equal(v, ' ') | equal(v, '\t')) << shift;
    m.newline |= (equal(v, '\n') | equal(v, '\r')) << shift;
  }
  m.valid = ~uint64_t{0};
  return m;
}
#endif

// Running totals over the chunks; `prev` carries each class's last bit
// into the next chunk so a run across a boundary starts once.
struct Totals {
  int64_t alpha = 0, alpha_runs = 0, digit = 0, digit_runs = 0, other = 0, high = 0;
  int64_t newlines = 0, indents = 0;
  Masks prev;

  static uint64_t starts(uint64_t m, uint64_t prev) { return m & ~((m << 1) | (prev >> 63)); }

  void add(const Masks &m) {
    uint64_t rest = m.valid & ~(m.alpha | m.digit | m.blank | m.newline | m.high);
    alpha += std::popcount(m.alpha);
    alpha_runs += std::popcount(starts(m.alpha, prev.alpha));
    digit += std::popcount(m.digit);
    digit_runs += std::popcount(starts(m.digit, prev.digit));
    other += std::popcount(rest);
    high += std::popcount(m.high);
    newlines += std::popcount(m.newline);
    // A run of two or more blanks (indentation) is a token; one space
    // joins the next word's.
    uint64_t pairs = m.blank & ((m.blank << 1) | (prev.blank >> 63));
    indents += std::popcount(starts(pairs, prev.blank & (prev.blank << 1)));
    prev = m;
  }

  int64_t tokens() const {
    int64_t long_letters = alpha > 4 * alpha_runs ? alpha - 4 * alpha_runs : 0;
    return alpha_runs + long_letters / 6 + (digit + 2 * digit_runs) / 3 + other + (high + 1) / 2 +
           newlines + indents;
  }
};

} // namespace

namespace {
// Built twice, picked at load time: with the POPCNT instruction (every
// x86-64 CPU since 2008) and without, where std::popcount is a libgcc call.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("popcnt", "default")))
#endif
int64_t
count_tokens(const unsigned char *p, size_t n) {
  size_t i = 0;
  Totals t;
#if defined(__SSE2__)
  for (; i + 64 <= n; i += 64) t.add(classify64(p + i));
#endif
  for (; i < n; i += 64) t.add(classify_scalar(p + i, n - i < 64 ? n - i : 64));
  return t.tokens();
}
} // namespace

int64_t ApproxCounter::count(std::string_view text) const {
  return count_tokens(reinterpret_cast<const unsigned char *>(text.data()), text.size());
}

const Counter &default_counter() {
  static const ApproxCounter counter;
  return counter;
}

} // namespace ctxdb::token
