#include "json/parse.hpp"

#include "error.hpp"
#include "json/json_writer.hpp"

#include <charconv>
#include <cmath>

namespace ctxdb::json {

simdjson::dom::element parse(simdjson::dom::parser &parser, std::string_view text,
                             std::string_view what) {
  if (text.empty()) throw Error(Code::kInvalidJson, std::string(what) + ": empty input");
  simdjson::dom::element e;
  auto err = parser.parse(text.data(), text.size()).get(e);
  if (err == simdjson::UTF8_ERROR)
    throw Error(Code::kInvalidUtf8, std::string(what) + ": not valid UTF-8");
  if (err == simdjson::MEMALLOC) throw Error(Code::kNoMem, std::string(what) + ": out of memory");
  if (err)
    throw Error(Code::kInvalidJson,
                std::string(what) + ": invalid JSON (" + simdjson::error_message(err) + ")");
  return e;
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
