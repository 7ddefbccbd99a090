#include "project/search_query.hpp"

#include <algorithm>
#include <cctype>

namespace ctxdb::project {

namespace {

bool is_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// The code point at text[i] (valid UTF-8) and its length in bytes.
char32_t decode(std::string_view text, size_t i, size_t &len) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  len = std::min(len, text.size() - i);
  if (len == 1) return c;
  char32_t cp = c & (0xFF >> (len + 1));
  for (size_t k = 1; k < len; ++k)
    cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return cp;
}

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char &c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

} // namespace

std::vector<std::string> split_terms(std::string_view query) {
  std::vector<std::string> terms;
  std::string cur;
  for (size_t i = 0; i < query.size();) {
    size_t len;
    char32_t cp = decode(query, i, len);
    if ((cp < 0x80 && is_space(static_cast<unsigned char>(cp))) || cp == 0x3000) {
      if (!cur.empty()) terms.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.append(query.substr(i, len));
    }
    i += len;
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

// Whether the tokenizer (unicode61) keeps the code point in a word: ASCII
// letters and digits, and non-ASCII outside the blocks of symbols it
// separates words by (punctuation, arrows, mathematical and technical
// signs, dingbats, emoji, variation selectors).
bool is_word_char(char32_t cp) {
  if (cp < 0x80) return std::isalnum(int(cp)) != 0;
  return !((cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0xFE00 && cp <= 0xFE0F) ||
           (cp >= 0x1F000 && cp <= 0x1FAFF));
}

} // namespace

std::vector<std::string> word_terms(const std::vector<std::string> &terms) {
  std::vector<std::string> out;
  for (const std::string &t : terms)
    for (size_t i = 0, len = 0; i < t.size(); i += len)
      if (is_word_char(decode(t, i, len))) {
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
  for (std::string t : split_terms(query)) {
    if (t == "AND" || t == "OR" || t == "NOT" || t.starts_with("NEAR")) continue;
    if (size_t colon = t.find(':'); colon != std::string::npos) t.erase(0, colon + 1);
    std::erase_if(t,
                  [](char c) { return c == '"' || c == '(' || c == ')' || c == '*' || c == '^'; });
    if (!t.empty() && utf8_length(t) < 3) return true;
  }
  return false;
}

size_t utf8_length(std::string_view text) {
  return size_t(
      std::count_if(text.begin(), text.end(), [](char c) { return !is_continuation(c); }));
}

bool has_cjk(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t len;
    char32_t cp = decode(text, i, len);
    i += len;
    if ((cp >= 0x2E80 && cp <= 0x9FFF) || // radicals, kana, CJK punctuation, ideographs
        (cp >= 0xAC00 && cp <= 0xD7AF) || // Hangul syllables
        (cp >= 0xF900 && cp <= 0xFAFF) || // compatibility ideographs
        (cp >= 0xFF66 && cp <= 0xFF9F) || // halfwidth katakana
        (cp >= 0x20000 && cp <= 0x3134F)) // ideographs, extensions B–G
      return true;
  }
  return false;
}

std::string mark_snippet(std::string_view text, std::string_view needle, size_t context_bytes) {
  size_t at = needle.empty() ? std::string_view::npos : ascii_lower(text).find(ascii_lower(needle));
  size_t begin = at == std::string_view::npos ? 0 : at - std::min(at, context_bytes);
  size_t match_end = at == std::string_view::npos ? 0 : at + needle.size();
  size_t end = std::min(text.size(), std::max(match_end, begin) + context_bytes);
  while (begin > 0 && is_continuation(text[begin])) --begin;
  while (end < text.size() && is_continuation(text[end])) ++end;
  std::string out = begin > 0 ? "…" : "";
  if (at == std::string_view::npos) {
    out.append(text.substr(begin, end - begin));
  } else {
    out.append(text.substr(begin, at - begin)).append("«");
    out.append(text.substr(at, needle.size())).append("»");
    out.append(text.substr(match_end, end - match_end));
  }
  if (end < text.size()) out += "…";
  return out;
}

} // namespace ctxdb::project
