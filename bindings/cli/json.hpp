// json.hpp — reading the library's JSON results and writing small JSON
// inputs. The library speaks JSON strings; the CLI parses them with simdjson
// only to print them for humans.
#ifndef CTXDB_CLI_JSON_HPP
#define CTXDB_CLI_JSON_HPP

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace cli {

using simdjson::dom::element;

// A parsed JSON document. Elements point into the parser's memory, so the
// document must outlive every element taken from it (hence no copy/move).
class JsonDoc {
public:
  // Parses JSON the library returned; a failure is a library bug and is
  // reported as CTXDB_INTERNAL.
  explicit JsonDoc(std::string_view text);
  JsonDoc(const JsonDoc &) = delete;
  JsonDoc &operator=(const JsonDoc &) = delete;

  element root() const { return root_; }

private:
  simdjson::dom::parser parser_;
  element root_;
};

// Fields of an object, with a fallback when absent or of another type.
std::string_view get_string(element obj, std::string_view key, std::string_view fallback = {});
int64_t get_int(element obj, std::string_view key, int64_t fallback = 0);
bool get_bool(element obj, std::string_view key, bool fallback = false);

// The text of a JSON string literal for s, quotes included.
std::string json_quote(std::string_view s);

// The compact JSON text of any element.
std::string to_json(element e);

} // namespace cli

#endif // CTXDB_CLI_JSON_HPP
