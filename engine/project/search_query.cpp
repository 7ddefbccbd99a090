#include "project/search_query.hpp"

#include "util/cjk.hpp"
#include "util/regex.hpp"

#include <algorithm>

namespace ctxdb::project {

namespace {

bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

} // namespace

std::vector<std::string> split_terms(std::string_view query) {
  std::vector<std::string> terms;
  std::string cur;
  for (size_t i = 0; i < query.size();) {
    size_t start = i;
    uint32_t cp = util::next_code_point(query, i);
    if ((cp < 0x80 && is_space(static_cast<unsigned char>(cp))) || cp == 0x3000) {
      if (!cur.empty()) terms.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.append(query.substr(start, i - start));
    }
  }
  if (!cur.empty()) terms.push_back(std::move(cur));
  return terms;
}

std::string fts_quote(std::string_view term) {
  std::string out = "\"";
  for (char c : term) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string plain_match(const std::vector<std::string> &terms) {
  std::string out;
  for (const std::string &t : terms) out += (out.empty() ? "" : " AND ") + fts_quote(t);
  return out;
}

namespace {

// Whether the tokenizer (unicode61: letters, digits and private use) keeps
// the code point in a word: ASCII letters and digits, and non-ASCII outside
// the symbols it separates words by. Without Unicode's tables, the symbols
// are those of the blocks and ranges a query plausibly holds: Latin-1's
// signs (° ± © £ × ÷ …, not ª ² ³ µ ¹ º ¼-¾), general punctuation, arrows,
// mathematical and technical signs, dingbats, supplemental punctuation,
// CJK punctuation (not 々 〆 〇 and the other letters and numerals there),
// variation selectors, fullwidth punctuation, emoji.
bool is_word_char(char32_t cp) {
  if (cp < 0x80) return std::isalnum(int(cp)) != 0;
  auto in = [cp](char32_t a, char32_t b) { return cp >= a && cp <= b; };
  if (in(0xA0, 0xBF))
    return cp == 0xAA || cp == 0xB2 || cp == 0xB3 || cp == 0xB5 || cp == 0xB9 || cp == 0xBA ||
           in(0xBC, 0xBE);
  if (in(0x3000, 0x303F))
    return in(0x3005, 0x3007) || in(0x3021, 0x3029) || in(0x3031, 0x3035) || in(0x3038, 0x303C);
  return !(cp == 0xD7 || cp == 0xF7 || in(0x2000, 0x2BFF) || in(0x2E00, 0x2E7F) ||
           in(0xFE00, 0xFE0F) || in(0xFF01, 0xFF0F) || in(0xFF1A, 0xFF20) || in(0xFF3B, 0xFF40) ||
           in(0xFF5B, 0xFF65) || in(0x1F000, 0x1FAFF));
}

// An FTS5 term of a query, as fts5_expr.c reads it: outside double quotes,
// a bareword is a run of ASCII letters, digits, '_', \x1a and non-ASCII
// bytes, ended by anything else; a quoted string ("" a quote) is one.
struct FtsTerm {
  std::string text;
  bool quoted = false;
  bool column = false; // a bareword before ':' (a column filter)
};

bool is_bareword_byte(unsigned char c) {
  return c >= 0x80 || std::isalnum(c) || c == '_' || c == 0x1A;
}

std::vector<FtsTerm> fts_terms(std::string_view q) {
  std::vector<FtsTerm> out;
  for (size_t i = 0; i < q.size();) {
    unsigned char c = static_cast<unsigned char>(q[i]);
    if (c == '"') {
      FtsTerm t{"", true};
      for (++i; i < q.size(); ++i) {
        if (q[i] == '"' && (i + 1 >= q.size() || q[i + 1] != '"')) break;
        if (q[i] == '"') ++i; // "" is a quote
        t.text += q[i];
      }
      ++i; // the closing quote
      out.push_back(std::move(t));
    } else if (is_bareword_byte(c)) {
      size_t start = i;
      while (i < q.size() && is_bareword_byte(static_cast<unsigned char>(q[i]))) ++i;
      FtsTerm t{std::string(q.substr(start, i - start))};
      size_t next = q.find_first_not_of(" \t\r\n", i);
      t.column = next != std::string_view::npos && q[next] == ':';
      out.push_back(std::move(t));
    } else {
      ++i;
    }
  }
  return out;
}

bool is_operator(const FtsTerm &t) {
  return !t.quoted && (t.text == "AND" || t.text == "OR" || t.text == "NOT" || t.text == "NEAR");
}

} // namespace

std::vector<std::string> word_terms(const std::vector<std::string> &terms) {
  std::vector<std::string> out;
  for (const std::string &t : terms)
    for (size_t i = 0; i < t.size();)
      if (is_word_char(util::next_code_point(t, i))) {
        out.push_back(t);
        break;
      }
  return out;
}

bool looks_like_fts(std::string_view query) {
  if (query.find_first_of("\"*^():") != std::string_view::npos) return true;
  for (const std::string &t : split_terms(query))
    if (t == "AND" || t == "OR" || t == "NOT" || t.starts_with("NEAR")) return true;
  return false;
}

bool has_short_fts_term(std::string_view query) {
  for (const FtsTerm &t : fts_terms(query))
    if (!is_operator(t) && !t.column && !t.text.empty() && utf8_length(t.text) < 3) return true;
  return false;
}

bool has_fts_not(std::string_view query) {
  for (const FtsTerm &t : fts_terms(query))
    if (!t.quoted && t.text == "NOT") return true;
  return false;
}

std::string first_long_fts_term(std::string_view query) {
  for (const FtsTerm &t : fts_terms(query))
    if (!is_operator(t) && !t.column && utf8_length(t.text) >= 3) return t.text;
  return "";
}

std::optional<std::string> one_quoted_term(std::string_view query) {
  size_t first = query.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return std::nullopt;
  std::string_view q = query.substr(first, query.find_last_not_of(" \t\r\n") - first + 1);
  if (q.size() < 3 || q.front() != '"' || q.back() != '"') return std::nullopt;
  std::string_view inner = q.substr(1, q.size() - 2);
  if (inner.find('"') != std::string_view::npos || split_terms(inner).size() != 1 ||
      split_terms(inner)[0] != inner)
    return std::nullopt;
  return std::string(inner);
}

size_t utf8_length(std::string_view text) {
  return size_t(
      std::count_if(text.begin(), text.end(), [](char c) { return !is_continuation(c); }));
}

bool has_cjk(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = util::next_code_point(text, i);
    if ((cp >= 0x2E80 && cp <= 0x9FFF) || // radicals, kana, CJK punctuation and symbols, ideographs
        (cp >= 0xAC00 && cp <= 0xD7AF) || // Hangul syllables
        (cp >= 0xF900 && cp <= 0xFAFF) || // compatibility ideographs
        (cp >= 0xFF66 && cp <= 0xFF9F) || // halfwidth katakana
        (cp >= 0x20000 && cp <= 0x3134F)) // ideographs, extensions B–G
      return true;
  }
  return false;
}

bool all_cjk(std::string_view term) {
  for (size_t i = 0; i < term.size();)
    if (!util::is_cjk(util::next_code_point(term, i))) return false;
  return !term.empty();
}

std::string mark_snippet(std::string_view text, util::CaselessFinder *needle,
                         size_t context_bytes) {
  size_t at = std::string_view::npos, match_end = 0;
  if (needle && !needle->find(text, at, match_end)) at = std::string_view::npos;
  size_t begin = at == std::string_view::npos ? 0 : at - std::min(at, context_bytes);
  size_t end = std::min(text.size(), std::max(match_end, begin) + context_bytes);
  while (begin > 0 && is_continuation(text[begin])) --begin;
  while (end < text.size() && is_continuation(text[end])) ++end;
  std::string out = begin > 0 ? "…" : "";
  if (at == std::string_view::npos) {
    out.append(text.substr(begin, end - begin));
  } else {
    out.append(text.substr(begin, at - begin)).append("«");
    out.append(text.substr(at, match_end - at)).append("»");
    out.append(text.substr(match_end, end - match_end));
  }
  if (end < text.size()) out += "…";
  return out;
}

} // namespace ctxdb::project
