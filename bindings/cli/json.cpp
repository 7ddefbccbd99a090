// json.cpp — simdjson helpers for the ctxdb inspector.
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstdio>

namespace cli {

JsonDoc::JsonDoc(std::string_view text) {
  if (parser_.parse(text.data(), text.size()).get(root_) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, "the library returned malformed JSON");
}

std::string_view get_string(element obj, std::string_view key, std::string_view fallback) {
  std::string_view value;
  if (obj[key].get_string().get(value) != simdjson::SUCCESS) return fallback;
  return value;
}

int64_t get_int(element obj, std::string_view key, int64_t fallback) {
  int64_t value = 0;
  if (obj[key].get_int64().get(value) != simdjson::SUCCESS) return fallback;
  return value;
}

bool get_bool(element obj, std::string_view key, bool fallback) {
  bool value = false;
  if (obj[key].get_bool().get(value) != simdjson::SUCCESS) return fallback;
  return value;
}

std::string json_quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        out += buf;
      } else {
        out += c; // UTF-8 passes through; the library checks it
      }
    }
  }
  out += '"';
  return out;
}

std::string to_json(element e) { return simdjson::minify(e); }

} // namespace cli
