#include "memory/search_text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace ctxdb::memory {

namespace {

// Decodes the code point at s[i] and advances i; a byte that does not
// start valid UTF-8 is returned as itself (inputs are checked UTF-8).
uint32_t next_code_point(std::string_view s, size_t &i) {
  auto b = static_cast<unsigned char>(s[i]);
  int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (i + n > s.size()) n = 1;
  uint32_t cp = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

bool is_cjk(uint32_t cp) {
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

// A word character of a plain-words query: ASCII letters and digits and
// any non-ASCII character that is not CJK (unicode61 decides, inside the
// quoted phrase, which of those are letters).
bool is_word_byte(unsigned char c) {
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

struct Word {
  std::string text; // as it goes between quotes
  bool cjk = false;
};

// The words of a query: runs of word characters, and runs of CJK
// characters (kept as space-separated characters).
std::vector<Word> split_words(std::string_view q) {
  std::vector<Word> words;
  Word cur;
  auto end_word = [&] {
    if (!cur.text.empty()) words.push_back(std::move(cur));
    cur = Word{};
  };
  for (size_t i = 0; i < q.size();) {
    size_t start = i;
    uint32_t cp = next_code_point(q, i);
    std::string_view bytes = q.substr(start, i - start);
    if (is_cjk(cp)) {
      if (!cur.cjk) end_word();
      cur.cjk = true;
      if (!cur.text.empty()) cur.text += ' ';
      cur.text += bytes;
    } else if (is_word_byte(static_cast<unsigned char>(q[start]))) {
      if (cur.cjk) end_word();
      cur.text += bytes;
    } else {
      end_word();
    }
  }
  end_word();
  return words;
}

bool is_stopword(const std::string &w) {
  static constexpr std::array<std::string_view, 48> kStop{
      "a",    "an",   "and",  "are",   "as",   "at",   "be",   "but",  "by",  "can",
      "do",   "does", "for",  "from",  "had",  "has",  "have", "how",  "i",   "if",
      "in",   "is",   "it",   "its",   "me",   "my",   "no",   "not",  "of",  "on",
      "or",   "our",  "so",   "that",  "the",  "then", "this", "to",   "was", "we",
      "were", "what", "when", "where", "with", "you",  "your", "which"};
  if (w.size() > 5) return false;
  std::string lower;
  for (char c : w) lower += char(c >= 'A' && c <= 'Z' ? c + 32 : c);
  return std::find(kStop.begin(), kStop.end(), lower) != kStop.end();
}

void append_phrase(std::string &out, std::string_view text) {
  out += '"';
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

// A query's terms are capped: a long request as the query would otherwise
// cost one posting-list scan per word.
constexpr size_t kMaxTerms = 32;

} // namespace

std::string index_text(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool prev_cjk = false;
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    bool cjk = is_cjk(next_code_point(text, i));
    if (cjk || prev_cjk) out += ' ';
    out.append(text.substr(start, i - start));
    prev_cjk = cjk;
  }
  return out;
}

std::vector<std::string> words_phrases(std::string_view query, bool all) {
  std::vector<Word> words = split_words(query);
  std::vector<std::string> terms;
  bool any_content = std::any_of(words.begin(), words.end(),
                                 [](const Word &w) { return w.cjk || !is_stopword(w.text); });
  for (Word &w : words) {
    if (!all && any_content && !w.cjk && is_stopword(w.text)) continue;
    if (std::find(terms.begin(), terms.end(), w.text) != terms.end()) continue;
    terms.push_back(std::move(w.text));
    if (terms.size() == kMaxTerms) break;
  }
  std::vector<std::string> phrases;
  for (const std::string &t : terms) append_phrase(phrases.emplace_back(), t);
  return phrases;
}

std::string join_phrases(const std::vector<std::string> &phrases, bool all) {
  std::string out;
  for (const std::string &p : phrases) {
    if (!out.empty()) out += all ? " AND " : " OR ";
    out += p;
  }
  return out;
}

std::string words_query(std::string_view query, bool all) {
  return join_phrases(words_phrases(query, all), all);
}

std::string fts_query(std::string_view query) {
  std::string out;
  bool quoted = false;   // inside a "…" string of the query
  bool run = false;      // inside a CJK run outside quotes: a phrase we opened
  bool prev_cjk = false; // the previous character was CJK
  for (size_t i = 0; i < query.size();) {
    size_t start = i;
    uint32_t cp = next_code_point(query, i);
    std::string_view bytes = query.substr(start, i - start);
    bool cjk = is_cjk(cp);
    if (cjk && !quoted && !run) {
      out += " \"";
      run = true;
    } else if (cjk || prev_cjk) {
      if (run && !cjk) {
        out += '"';
        run = false;
      }
      out += ' ';
    }
    prev_cjk = cjk;
    if (cjk) {
      out += bytes;
      continue;
    }
    if (cp == '"') quoted = !quoted;
    out += bytes;
  }
  if (run) out += '"';
  return out;
}

} // namespace ctxdb::memory
