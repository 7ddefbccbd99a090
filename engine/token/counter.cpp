#include "token/counter.hpp"

#include <bit>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ctxdb::token {

namespace {

using F = ApproxCounter::Feature;

// Milli-tokens per feature, fitted by bench/tokens/fit.py on the corpus
// (equal weight per text kind, least squares of the relative error,
// non-negative). Hangul, kXLetters and kEmoji were set by hand (see the
// header).
constexpr ApproxCounter::Features kWeights = [] {
  ApproxCounter::Features w{};
  w[F::kWordRuns] = 1058;
  w[F::kCamelHumps] = 0;
  w[F::kLongLetters] = 231;
  w[F::kXLetters] = 250;
  w[F::kDigits] = 192;
  w[F::kDigitRuns] = 772;
  w[F::kSpaceDigits] = 1175;
  w[F::kPunctRuns] = 539;
  w[F::kPunctExtra] = 175;
  w[F::kPunctWords] = 0;
  w[F::kNewlineRuns] = 392;
  w[F::kIndents] = 1310;
  w[F::kHan] = 633;
  w[F::kKana] = 690;
  w[F::kHangul] = 700;
  w[F::kCjkPunct] = 1720;
  w[F::kCjkRuns] = 0;
  w[F::kSymbols] = 2604;
  w[F::kEmoji] = 1100;
  return w;
}();

// A byte's class. A multi-byte character gives its class to all its bytes,
// so runs are runs of bytes; only its first byte is a character head.
enum Class : uint8_t {
  kLower,
  kUpper,
  kDigit,
  kBlank,
  kNewline,
  kPunct,
  kXLetter,
  kHan,
  kKana,
  kHangul,
  kCjkPunct,
  kSymbol,
  kEmoji,
  kClassCount
};

// The classes of a block of up to 64 bytes, one bit per byte.
struct Masks {
  uint64_t m[kClassCount] = {};
  uint64_t head = 0;
};

constexpr auto kAsciiClass = [] {
  std::array<uint8_t, 128> t{};
  for (int c = 0; c < 128; ++c) {
    if (c >= 'a' && c <= 'z')
      t[c] = kLower;
    else if (c >= 'A' && c <= 'Z')
      t[c] = kUpper;
    else if (c >= '0' && c <= '9')
      t[c] = kDigit;
    else if (c == ' ' || c == '\t')
      t[c] = kBlank;
    else if (c == '\n' || c == '\r')
      t[c] = kNewline;
    else
      t[c] = kPunct;
  }
  return t;
}();

// The class of a non-ASCII code point, by the ranges that tokenize alike.
Class class_of(uint32_t cp) {
  if (cp < 0x800) return cp < 0xC0 || cp == 0xD7 || cp == 0xF7 ? kSymbol : kXLetter;
  if (cp < 0x2000) return kXLetter;   // Indic, Thai, Georgian, Latin extended, ...
  if (cp < 0x2C00) return kSymbol;    // general punctuation, arrows, math, boxes, dingbats
  if (cp < 0x2E80) return kXLetter;   // Glagolitic, Coptic, Tifinagh, ...
  if (cp < 0x3000) return kHan;       // CJK radicals
  if (cp < 0x3040) return kCjkPunct;  // 、。「」 and other CJK punctuation
  if (cp < 0x3100) return kKana;      // hiragana, katakana
  if (cp < 0x3130) return kHan;       // bopomofo
  if (cp < 0x3190) return kHangul;    // compatibility jamo
  if (cp < 0x31F0) return kHan;       // kanbun, strokes
  if (cp < 0x3200) return kKana;      // katakana extension
  if (cp < 0x3400) return kCjkPunct;  // enclosed letters, compatibility units
  if (cp < 0xA000) return kHan;       // extension A and the unified ideographs
  if (cp < 0xAC00) return kXLetter;   // Yi, Vai, ...
  if (cp < 0xD7B0) return kHangul;    // hangul syllables
  if (cp < 0xF900) return kSymbol;    // surrogates (invalid), private use
  if (cp < 0xFB00) return kHan;       // compatibility ideographs
  if (cp < 0xFE00) return kXLetter;   // presentation forms
  if (cp < 0xFF00) return kSymbol;    // variation selectors, small forms
  if (cp < 0xFF66) return kCjkPunct;  // full-width ASCII, half-width punctuation
  if (cp < 0xFFA0) return kKana;      // half-width katakana
  if (cp < 0x10000) return kCjkPunct; // half-width hangul, specials
  if (cp >= 0x20000 && cp < 0x40000) return kHan;
  return kEmoji;
}

// The class and length of the UTF-8 character at p[0] (a byte >= 0x80),
// reading at most `avail` bytes. Anything not a whole, well-formed
// sequence is one invalid byte, classed as a symbol.
inline void decode(const unsigned char *p, size_t avail, Class &cls, int &len) {
  unsigned char c = p[0];
  int n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  cls = kSymbol;
  len = 1;
  if (n == 0 || size_t(n) > avail) return;
  uint32_t cp = c & (0x7F >> n);
  for (int k = 1; k < n; ++k) {
    if ((p[k] & 0xC0) != 0x80) return;
    cp = (cp << 6) | (p[k] & 0x3F);
  }
  cls = class_of(cp);
  len = n;
}

// Classifies one block byte by byte. A character that runs past the
// block's end is decoded whole (the buffer goes on) and its remaining
// bytes are left in `pending` for the next block.
struct Scalar {
  int pending = 0;
  Class pending_class = kSymbol;

  Masks classify(const unsigned char *p, size_t n, size_t avail) {
    Masks m;
    for (size_t i = 0; i < n;) {
      uint64_t bit = uint64_t{1} << i;
      if (pending > 0) {
        m.m[pending_class] |= bit;
        --pending;
        ++i;
        continue;
      }
      m.head |= bit;
      unsigned char c = p[i];
      if (c < 0x80) {
        m.m[kAsciiClass[c]] |= bit;
        ++i;
        continue;
      }
      Class cls;
      int len;
      decode(p + i, avail - i, cls, len);
      pending = len;
      pending_class = cls;
    }
    return m;
  }
};

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

// The classes of 64 ASCII bytes; false (and nothing) if any is not ASCII.
bool classify_ascii64(const unsigned char *p, Masks &m) {
  __m128i v[4];
  std::memcpy(v, p, 64);
  __m128i any = _mm_or_si128(_mm_or_si128(v[0], v[1]), _mm_or_si128(v[2], v[3]));
  if (_mm_movemask_epi8(any) != 0) return false;
  for (int k = 0; k < 4; ++k) {
    int shift = 16 * k;
    m.m[kLower] |= in_range(v[k], 'a', 26) << shift;
    m.m[kUpper] |= in_range(v[k], 'A', 26) << shift;
    m.m[kDigit] |= in_range(v[k], '0', 10) << shift;
    m.m[kBlank] |= (equal(v[k], ' ') | equal(v[k], '\t')) << shift;
    m.m[kNewline] |= (equal(v[k], '\n') | equal(v[k], '\r')) << shift;
  }
  m.m[kPunct] = ~(m.m[kLower] | m.m[kUpper] | m.m[kDigit] | m.m[kBlank] | m.m[kNewline]);
  m.head = ~uint64_t{0};
  return true;
}
#endif

// Running feature counts over the blocks; `prev` carries the last block's
// masks so a run across a boundary starts once.
struct Totals {
  ApproxCounter::Features f{};
  Masks prev;

  // m shifted up by j (1..63) with the previous block's top bits shifted in:
  // bit i says whether byte i - j had the class.
  static uint64_t shl(uint64_t m, uint64_t prev, int j) { return (m << j) | (prev >> (64 - j)); }
  static uint64_t starts(uint64_t m, uint64_t prev) { return m & ~shl(m, prev, 1); }
  static int64_t pop(uint64_t m) { return std::popcount(m); }

  // Inlined into each clone of count_features, so the popcnt clone's
  // std::popcount is the instruction (not inlined, add was built once,
  // without it, and every count paid a libgcc call per mask).
  [[gnu::always_inline]] void add(const Masks &b) {
    const uint64_t *m = b.m, *p = prev.m;
    uint64_t w = m[kLower] | m[kUpper] | m[kXLetter];
    uint64_t wp = p[kLower] | p[kUpper] | p[kXLetter];
    uint64_t word_starts = starts(w, wp);
    f[F::kWordRuns] += pop(word_starts);
    f[F::kCamelHumps] += pop(m[kUpper] & shl(m[kLower], p[kLower], 1));
    uint64_t deep = w;
    for (int j = 1; j <= 6; ++j) deep &= shl(w, wp, j);
    f[F::kLongLetters] += pop(deep);
    f[F::kXLetters] += pop(m[kXLetter] & b.head);

    uint64_t digit_starts = starts(m[kDigit], p[kDigit]);
    f[F::kDigits] += pop(m[kDigit]);
    f[F::kDigitRuns] += pop(digit_starts);
    f[F::kSpaceDigits] += pop(digit_starts & shl(m[kBlank], p[kBlank], 1));

    f[F::kPunctRuns] += pop(starts(m[kPunct], p[kPunct]));
    f[F::kPunctExtra] += pop(m[kPunct] & shl(m[kPunct], p[kPunct], 1));
    f[F::kPunctWords] += pop(word_starts & shl(m[kPunct], p[kPunct], 1));

    f[F::kNewlineRuns] += pop(starts(m[kNewline], p[kNewline]));
    // A run of two or more blanks (indentation) is a token; one space
    // joins the next word's.
    uint64_t pairs = m[kBlank] & shl(m[kBlank], p[kBlank], 1);
    uint64_t prev_pairs = p[kBlank] & (p[kBlank] << 1);
    f[F::kIndents] += pop(starts(pairs, prev_pairs));

    f[F::kHan] += pop(m[kHan] & b.head);
    f[F::kKana] += pop(m[kKana] & b.head);
    f[F::kHangul] += pop(m[kHangul] & b.head);
    f[F::kCjkPunct] += pop(m[kCjkPunct] & b.head);
    f[F::kCjkRuns] += pop(starts(m[kHan] | m[kKana], p[kHan] | p[kKana]));
    f[F::kSymbols] += pop(m[kSymbol] & b.head);
    f[F::kEmoji] += pop(m[kEmoji] & b.head);
    prev = b;
  }
};

// Built twice, picked at load time: with the POPCNT instruction (every
// x86-64 CPU since 2008) and without, where std::popcount is a libgcc call.
// Not under ThreadSanitizer: the picking runs before its runtime is up.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
__attribute__((target_clones("popcnt", "default")))
#endif
ApproxCounter::Features
count_features(const unsigned char *p, size_t n) {
  Totals t;
  Scalar scalar;
  for (size_t i = 0; i < n; i += 64) {
    size_t len = n - i < 64 ? n - i : 64;
    Masks m;
#if defined(__SSE2__)
    if (len == 64 && scalar.pending == 0 && classify_ascii64(p + i, m)) {
      t.add(m);
      continue;
    }
#endif
    t.add(scalar.classify(p + i, len, n - i));
  }
  return t.f;
}

} // namespace

ApproxCounter::Features ApproxCounter::features(std::string_view text) {
  return count_features(reinterpret_cast<const unsigned char *>(text.data()), text.size());
}

const std::array<std::string_view, ApproxCounter::kFeatureCount> &ApproxCounter::feature_names() {
  static const std::array<std::string_view, kFeatureCount> names = {
      "word_runs",    "camel_humps",  "long_letters", "x_letters",   "digits",
      "digit_runs",   "space_digits", "punct_runs",   "punct_extra", "punct_words",
      "newline_runs", "indents",      "han",          "kana",        "hangul",
      "cjk_punct",    "cjk_runs",     "symbols",      "emoji"};
  return names;
}

int64_t ApproxCounter::count(std::string_view text) const {
  if (text.empty()) return 0;
  Features f = features(text);
  int64_t milli = 0;
  for (int i = 0; i < kFeatureCount; ++i) milli += kWeights[i] * f[i];
  // Anything non-empty is at least a token.
  return milli < 1500 ? 1 : (milli + 500) / 1000;
}

const Counter &default_counter() {
  static const ApproxCounter counter;
  return counter;
}

} // namespace ctxdb::token
