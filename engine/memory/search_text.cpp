#include "memory/search_text.hpp"

#include "util/cjk.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace ctxdb::memory {

namespace {

using util::is_cjk;
using util::next_code_point;

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
