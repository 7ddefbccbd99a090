// parse.hpp — parsing JSON input with simdjson, with errors that name what
// was being parsed.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>

namespace ctxdb::json {

// The deepest nesting of arrays and objects ctxdb reads in any input (an
// event's envelope is one level, its payload the rest), far enough below
// what every binding's decoder reads that what ctxdb stores reads back:
// Python's json module recurses once per level, under a limit of about
// 1,000.
constexpr size_t kMaxInputDepth = 256;

// Parses `text` (validating UTF-8); throws kInvalidUtf8 or kInvalidJson
// with a message starting with `what`, kInvalidArg when it nests deeper
// than kMaxInputDepth. The element lives as long as the parser's next parse.
simdjson::dom::element parse(simdjson::dom::parser &parser, std::string_view text,
                             std::string_view what);

// Parses an event's payload as the file stores it: text that does not
// parse means the file was damaged, kCorrupt naming the event (event_id;
// empty when the caller has none). No depth limit beyond simdjson's own:
// what was stored is read as it was.
simdjson::dom::element parse_payload(simdjson::dom::parser &parser, std::string_view text,
                                     std::string_view event_id);

// Throws kInvalidUtf8 naming `what` when s is not valid UTF-8.
void require_utf8(std::string_view s, std::string_view what);

// The compact, canonical serialization of a parsed value: the form in which
// payloads are stored and hashed. No whitespace, keys in input order,
// strings escaped minimally, numbers in their shortest round-trip form.
// It is a fixed point: canonical(parse(canonical(x))) == canonical(x).
std::string canonical(simdjson::dom::element e);
// The same, into a string with room for `size_hint` bytes reserved first
// (e.g. the size of the text e was parsed from): no regrowth on the way.
std::string canonical(simdjson::dom::element e, size_t size_hint);
// The same, setting `retyped` when the text reads back with another type
// somewhere: a double with an integral value is written as an integer
// (250.0 as 250), so its parse is not e's.
std::string canonical(simdjson::dom::element e, size_t size_hint, bool &retyped);

// A short name for an element's JSON type ("string", "object", …).
const char *type_name(simdjson::dom::element e);

} // namespace ctxdb::json
