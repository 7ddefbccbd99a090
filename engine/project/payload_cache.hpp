// payload_cache.hpp — one parse of an event's payload shared by the
// projections that read it, so an event that feeds messages and tool_calls
// is parsed once, not once per projection.
#pragma once

#include "log/event.hpp"
#include "store/store.hpp"

#include <simdjson.h>

#include <string>
#include <string_view>

namespace ctxdb::project {

class PayloadCache {
public:
  // The parsed payload of `e` (which passed the log's validation): the
  // log's parse of it while it is being appended, else a parse of its
  // text, which lives until the next call with another payload.
  simdjson::dom::element get(const log::Event &e);

private:
  simdjson::dom::parser parser_;
  simdjson::dom::element doc_;
  // The bytes doc_ was parsed from: the key, since the same bytes always
  // parse the same (a pos or an id can come back after a rollback).
  std::string parsed_;
  bool valid_ = false;
};

// A string field of a parsed object, or empty when absent or not a string.
std::string_view string_field(simdjson::dom::element obj, const char *key);

// Binds the object's field `key` (a string or an integer) as parameter
// `index`, or NULL when it is absent.
void bind_field(SQLite::Statement &q, int index, simdjson::dom::element obj, const char *key);

} // namespace ctxdb::project
