#include "json/parse.hpp"

#include "error.hpp"
#include "json/json_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace ctxdb::json {

namespace {

using simdjson::ondemand::json_type;

// Whether simdjson's DOM parser reads the number token as a number: an
// integer must fit in int64 or uint64, anything else in a double.
bool readable(simdjson::ondemand::value v) {
  std::string_view raw = v.raw_json_token();
  int64_t i;
  uint64_t u;
  double d;
  if (raw.find_first_of(".eE") == std::string_view::npos)
    return !v.get_int64().get(i) || !v.get_uint64().get(u);
  return !v.get_double().get(d);
}

// Finds the first number under v that the DOM parser refused, as
// "field 'path' holds TOKEN"; false when the walk finds none (or fails).
bool find_bad_number(simdjson::ondemand::value v, const std::string &path, std::string &out) {
  json_type t;
  if (v.type().get(t)) return false;
  if (t == json_type::object) {
    simdjson::ondemand::object o;
    if (v.get_object().get(o)) return false;
    for (auto field : o) {
      std::string_view key;
      simdjson::ondemand::value child;
      if (field.unescaped_key().get(key) || field.value().get(child)) return false;
      if (find_bad_number(child, path.empty() ? std::string(key) : path + "." + std::string(key),
                          out))
        return true;
    }
  } else if (t == json_type::array) {
    simdjson::ondemand::array a;
    if (v.get_array().get(a)) return false;
    size_t i = 0;
    for (auto item : a) {
      simdjson::ondemand::value child;
      if (item.get(child)) return false;
      if (find_bad_number(child, path + "[" + std::to_string(i++) + "]", out)) return true;
    }
  } else if (t == json_type::number && !readable(v)) {
    std::string_view raw = v.raw_json_token();
    raw = raw.substr(0, raw.find_last_not_of(" \t\r\n") + 1);
    std::string token = raw.size() > 40 ? std::string(raw.substr(0, 40)) + "…" : std::string(raw);
    out = (path.empty() ? "the document" : "field '" + path + "'") + " holds " + token;
    return true;
  }
  return false;
}

// Where a number error is: simdjson's DOM parser says only that some
// number failed (an integer past 64 bits, 1e400, 01). The on-demand
// parser, which reads values one at a time, finds which.
std::string bad_number(std::string_view text) {
  simdjson::ondemand::parser parser;
  simdjson::padded_string padded(text);
  simdjson::ondemand::document doc;
  simdjson::ondemand::value root;
  std::string out;
  if (parser.iterate(padded).get(doc)) return out;
  json_type t;
  if (doc.type().get(t)) return out;
  if (t == json_type::number) {
    // A scalar document is not a value of the on-demand API.
    std::string_view raw;
    if (!doc.raw_json_token().get(raw))
      out = "the document holds " + std::string(raw.substr(0, 40));
    return out;
  }
  if (doc.get_value().get(root)) return out;
  find_bad_number(root, "", out);
  return out;
}

} // namespace

simdjson::dom::element parse(simdjson::dom::parser &parser, std::string_view text,
                             std::string_view what) {
  if (text.empty()) throw Error(Code::kInvalidJson, std::string(what) + ": empty input");
  // The parser keeps its depth when it grows, so this runs once per parser.
  if (parser.max_depth() != kMaxInputDepth) {
    size_t capacity = std::max(text.size(), simdjson::dom::MINIMAL_DOCUMENT_CAPACITY);
    if (parser.allocate(capacity, kMaxInputDepth))
      throw Error(Code::kNoMem, std::string(what) + ": out of memory");
  }
  simdjson::dom::element e;
  auto err = parser.parse(text.data(), text.size()).get(e);
  if (err == simdjson::DEPTH_ERROR)
    throw Error(Code::kInvalidArg, std::string(what) + ": nested deeper than " +
                                       std::to_string(kMaxInputDepth) +
                                       " levels (arrays and objects), the most ctxdb reads");
  if (err == simdjson::UTF8_ERROR)
    throw Error(Code::kInvalidUtf8, std::string(what) + ": not valid UTF-8");
  if (err == simdjson::MEMALLOC) throw Error(Code::kNoMem, std::string(what) + ": out of memory");
  if (err == simdjson::NUMBER_ERROR)
    if (std::string where = bad_number(text); !where.empty())
      throw Error(Code::kInvalidJson, std::string(what) + ": invalid JSON (" + where +
                                          ", not a number ctxdb reads: an integer must fit in "
                                          "64 bits, a fraction or exponent in a double)");
  if (err)
    throw Error(Code::kInvalidJson,
                std::string(what) + ": invalid JSON (" + simdjson::error_message(err) + ")");
  return e;
}

simdjson::dom::element parse_payload(simdjson::dom::parser &parser, std::string_view text,
                                     std::string_view event_id) {
  simdjson::dom::element e;
  auto err = parser.parse(text.data(), text.size()).get(e);
  if (!err) return e;
  std::string what = event_id.empty() ? std::string("a stored payload")
                                      : "the payload of event '" + std::string(event_id) + "'";
  if (err == simdjson::MEMALLOC) throw Error(Code::kNoMem, what + ": out of memory");
  throw Error(Code::kCorrupt,
              what + " is damaged: not valid JSON (" + simdjson::error_message(err) + ")");
}

void require_utf8(std::string_view s, std::string_view what) {
  if (!simdjson::validate_utf8(s.data(), s.size()))
    throw Error(Code::kInvalidUtf8, std::string(what) + " is not valid UTF-8");
}

namespace {

// `retyped` is set when a double is written as an integer would be (250.0
// as 250): parsed again, the canonical text gives an integer there.
void write_canonical(std::string &out, simdjson::dom::element e, bool &retyped) {
  using T = simdjson::dom::element_type;
  char num[32];
  switch (e.type()) {
  case T::OBJECT: {
    out.push_back('{');
    bool first = true;
    for (auto [key, value] : simdjson::dom::object(e)) {
      if (!first) out.push_back(',');
      first = false;
      append_quoted(out, key);
      out.push_back(':');
      write_canonical(out, value, retyped);
    }
    out.push_back('}');
    return;
  }
  case T::ARRAY: {
    out.push_back('[');
    bool first = true;
    for (auto value : simdjson::dom::array(e)) {
      if (!first) out.push_back(',');
      first = false;
      write_canonical(out, value, retyped);
    }
    out.push_back(']');
    return;
  }
  case T::STRING: append_quoted(out, std::string_view(e)); return;
  case T::INT64: {
    auto r = std::to_chars(num, num + sizeof num, int64_t(e));
    out.append(num, r.ptr);
    return;
  }
  case T::UINT64: {
    auto r = std::to_chars(num, num + sizeof num, uint64_t(e));
    out.append(num, r.ptr);
    return;
  }
  case T::DOUBLE: {
    double d = double(e);
    // "-0" would read back as the integer 0; keep it a double.
    if (d == 0 && std::signbit(d)) {
      out += "-0.0";
      return;
    }
    auto r = std::to_chars(num, num + sizeof num, d); // shortest round trip
    if (std::string_view(num, size_t(r.ptr - num)).find_first_of(".e") == std::string_view::npos)
      retyped = true;
    out.append(num, r.ptr);
    return;
  }
  case T::BOOL: out += bool(e) ? "true" : "false"; return;
  case T::NULL_VALUE: out += "null"; return;
  }
}

} // namespace

std::string canonical(simdjson::dom::element e) { return canonical(e, 0); }

std::string canonical(simdjson::dom::element e, size_t size_hint) {
  bool retyped = false;
  return canonical(e, size_hint, retyped);
}

std::string canonical(simdjson::dom::element e, size_t size_hint, bool &retyped) {
  std::string out;
  out.reserve(size_hint);
  write_canonical(out, e, retyped);
  return out;
}

const char *type_name(simdjson::dom::element e) {
  switch (e.type()) {
  case simdjson::dom::element_type::ARRAY: return "array";
  case simdjson::dom::element_type::OBJECT: return "object";
  case simdjson::dom::element_type::INT64: return "integer";
  case simdjson::dom::element_type::UINT64: return "an integer past 64 signed bits";
  case simdjson::dom::element_type::DOUBLE: return "number";
  case simdjson::dom::element_type::STRING: return "string";
  case simdjson::dom::element_type::BOOL: return "boolean";
  case simdjson::dom::element_type::NULL_VALUE: return "null";
  }
  return "unknown";
}

} // namespace ctxdb::json
