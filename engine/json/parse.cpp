#include "json/parse.hpp"

#include "error.hpp"

namespace ctxdb::json {

simdjson::dom::element parse(simdjson::dom::parser &parser,
                             std::string_view text, std::string_view what) {
  if (text.empty())
    throw Error(Code::kInvalidJson, std::string(what) + ": empty input");
  simdjson::dom::element e;
  auto err = parser.parse(text.data(), text.size()).get(e);
  if (err == simdjson::UTF8_ERROR)
    throw Error(Code::kInvalidUtf8, std::string(what) + ": not valid UTF-8");
  if (err == simdjson::MEMALLOC)
    throw Error(Code::kNoMem, std::string(what) + ": out of memory");
  if (err)
    throw Error(Code::kInvalidJson, std::string(what) + ": invalid JSON (" +
                                        simdjson::error_message(err) + ")");
  return e;
}

void require_utf8(std::string_view s, std::string_view what) {
  if (!simdjson::validate_utf8(s.data(), s.size()))
    throw Error(Code::kInvalidUtf8, std::string(what) + " is not valid UTF-8");
}

std::string canonical(simdjson::dom::element e) { return simdjson::minify(e); }

const char *type_name(simdjson::dom::element e) {
  switch (e.type()) {
  case simdjson::dom::element_type::ARRAY: return "array";
  case simdjson::dom::element_type::OBJECT: return "object";
  case simdjson::dom::element_type::INT64:
  case simdjson::dom::element_type::UINT64: return "integer";
  case simdjson::dom::element_type::DOUBLE: return "number";
  case simdjson::dom::element_type::STRING: return "string";
  case simdjson::dom::element_type::BOOL: return "boolean";
  case simdjson::dom::element_type::NULL_VALUE: return "null";
  }
  return "unknown";
}

} // namespace ctxdb::json
