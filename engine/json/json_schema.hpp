// json_schema.hpp — a validator for the subset of JSON Schema that ctxdb's
// schemas in schema/json/ use, so the schemas are the one source of truth
// for what an input must hold.
//
// Supported keywords: type (a name or a list), required, properties,
// additionalProperties (a boolean, or the schema every unlisted property
// must match: a map), items, enum (strings), minLength, maxLength,
// minimum, maximum, pattern (PCRE2). Annotations (description, title,
// $schema, $id, $comment, examples, default) are ignored; any other keyword
// is refused when the schema is parsed, since ignoring it would drop the
// rule it states.
#pragma once

#include <simdjson.h>

#include <memory>
#include <string_view>

namespace ctxdb::json {

class Schema {
public:
  // Parses a schema document; a malformed schema is kInternal (it ships
  // with the library, so it is a bug, not bad input).
  static Schema parse(std::string_view schema_json, std::string_view name);

  // Throws kInvalidArg naming the first offending field, as `root` followed
  // by the field's path (e.g. "payload.content[1].type").
  void validate(simdjson::dom::element value, std::string_view root) const;

  struct Node;

private:
  std::shared_ptr<const Node> root_;
};

} // namespace ctxdb::json
