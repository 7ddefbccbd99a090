#include "json/json_writer.hpp"

#include "error.hpp"
#include "json/parse.hpp"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ctxdb::json {

namespace {

// True when any of the 8 bytes in v is a control character, '"' or '\\'
// (the SWAR "has less than" and "has zero byte" tests), so long strings are
// scanned 8 bytes at a time; flagged words are then looked at bytewise.
inline bool may_need_escape(uint64_t v) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  uint64_t control = (v - kOnes * 0x20) & ~v & kHigh;
  uint64_t q = v ^ (kOnes * '"'), b = v ^ (kOnes * '\\');
  uint64_t quote = (q - kOnes) & ~q & kHigh;
  uint64_t backslash = (b - kOnes) & ~b & kHigh;
  return (control | quote | backslash) != 0;
}

// Appends s escaped, without the quotes; returns true when every byte of s
// is ASCII (then s is UTF-8 without looking further).
bool append_escaped(std::string &out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  size_t run = 0;    // start of the pending run of characters needing no escape
  uint64_t high = 0; // the high bits of the bytes looked at: non-zero, not ASCII
  for (size_t i = 0; i < s.size(); ++i) {
#if defined(__SSE2__)
    // 16 bytes at a time: a byte needs escaping if it is '"', '\\' or below
    // 0x20 (a signed compare after flipping the sign bit).
    if (i + 16 <= s.size()) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s.data() + i));
      high |= unsigned(_mm_movemask_epi8(v));
      __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                  _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                     _mm_cmplt_epi8(_mm_xor_si128(v, _mm_set1_epi8(char(0x80))),
                                                    _mm_set1_epi8(char(0x20 ^ 0x80))));
      int mask = _mm_movemask_epi8(special);
      if (mask == 0) {
        i += 15;
        continue;
      }
      i += __builtin_ctz(unsigned(mask)); // first byte to look at
    }
#endif
    if (i + 8 <= s.size()) {
      uint64_t word;
      std::memcpy(&word, s.data() + i, 8);
      high |= word & 0x8080808080808080ull;
      if (!may_need_escape(word)) {
        i += 7;
        continue;
      }
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    high |= c & 0x80;
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  out.append(s.data() + run, s.size() - run);
  return high == 0;
}

} // namespace

std::string valid_utf8(std::string_view s) {
  constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(char(c));
      ++i;
      continue;
    }
    // The continuation bytes a lead byte takes, and the range of the first
    // (Unicode's table 3-7: no overlong forms, no surrogates, <= U+10FFFF).
    size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
      need = 1;
    else if (c == 0xE0)
      need = 2, lo = 0xA0;
    else if (c == 0xED)
      need = 2, hi = 0x9F;
    else if (c >= 0xE1 && c <= 0xEF)
      need = 2;
    else if (c == 0xF0)
      need = 3, lo = 0x90;
    else if (c == 0xF4)
      need = 3, hi = 0x8F;
    else if (c >= 0xF1 && c <= 0xF3)
      need = 3;
    size_t j = i + 1;
    for (size_t k = 0; k < need && j < s.size(); ++k, ++j) {
      unsigned char d = static_cast<unsigned char>(s[j]);
      if (d < lo || d > hi) break;
      lo = 0x80, hi = 0xBF;
    }
    // A whole character is kept; the maximal invalid part of one is a
    // single U+FFFD, and the byte that ended it starts afresh.
    if (need > 0 && j - i == need + 1)
      out.append(s.substr(i, need + 1));
    else
      out.append(kReplacement);
    i = j;
  }
  return out;
}

void append_quoted(std::string &out, std::string_view s) {
  out.push_back('"');
  size_t start = out.size();
  // The common case, ASCII or valid UTF-8, is one pass (and a validation
  // when not ASCII); only a string with invalid bytes is written twice.
  if (!append_escaped(out, s) && !simdjson::validate_utf8(s.data(), s.size())) {
    out.resize(start);
    append_escaped(out, valid_utf8(s));
  }
  out.push_back('"');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ > 0) {
    uint64_t &word = first_[(depth_ - 1) / 64], bit = uint64_t(1) << ((depth_ - 1) % 64);
    if (!(word & bit)) out_.push_back(',');
    word &= ~bit;
  }
}

void JsonWriter::open(char bracket) {
  before_value();
  if (depth_ == kMaxDepth)
    throw Error(Code::kInternal, "JsonWriter: nesting deeper than " + std::to_string(kMaxDepth));
  out_.push_back(bracket);
  first_[depth_ / 64] |= uint64_t(1) << (depth_ % 64);
  ++depth_;
}

JsonWriter &JsonWriter::begin_object() {
  open('{');
  return *this;
}

JsonWriter &JsonWriter::end_object() {
  out_.push_back('}');
  --depth_;
  return *this;
}

JsonWriter &JsonWriter::begin_array() {
  open('[');
  return *this;
}

JsonWriter &JsonWriter::end_array() {
  out_.push_back(']');
  --depth_;
  return *this;
}

JsonWriter &JsonWriter::key(std::string_view k) {
  before_value();
  append_quoted(out_, k);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter &JsonWriter::value(std::string_view s) {
  before_value();
  append_quoted(out_, filter_ ? filter_->apply(s) : s);
  return *this;
}

JsonWriter &JsonWriter::element(simdjson::dom::element e) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
  case T::OBJECT:
    begin_object();
    for (auto [k, v] : simdjson::dom::object(e)) key(k).element(v);
    return end_object();
  case T::ARRAY:
    begin_array();
    for (simdjson::dom::element v : simdjson::dom::array(e)) element(v);
    return end_array();
  case T::STRING: return value(std::string_view(e));
  default: return raw(canonical(e)); // numbers, booleans, null: as stored
  }
}

JsonWriter &JsonWriter::value(int64_t n) {
  before_value();
  out_ += std::to_string(n);
  return *this;
}

JsonWriter &JsonWriter::boolean(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter &JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter &JsonWriter::raw(std::string_view json) {
  before_value();
  // Stored JSON is UTF-8 unless the file was damaged; the output stays
  // UTF-8 either way (verify is what reports the damage).
  if (simdjson::validate_utf8(json.data(), json.size()))
    out_.append(json);
  else
    out_.append(valid_utf8(json));
  return *this;
}

} // namespace ctxdb::json
