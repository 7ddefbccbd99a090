// event_parser.hpp — turns host JSON into events, checking it against the
// JSON Schemas embedded from schema/json/ (the envelope, and the payload of
// every core event type).
#pragma once

#include "log/event.hpp"

#include <simdjson.h>

#include <string_view>

namespace ctxdb::log {

class EventParser {
public:
  // A host event (schema/json/event.schema.json) for `session_id`.
  EventDraft parse_append(std::string_view json, std::string_view session_id);

  // A session creation (schema/json/session_create.schema.json): the draft
  // of its SessionStarted event, session id generated when absent.
  EventDraft parse_session_create(std::string_view json);

  // A stored event as export writes it (schema/json/stored_event.schema.json),
  // with its payload re-canonicalized so import can check its hashes.
  Event parse_stored(std::string_view json);

private:
  simdjson::dom::parser parser_;
};

// Throws kInvalidArg naming the field when a core type's payload breaks its
// schema; unknown types pass.
void validate_payload(std::string_view type, simdjson::dom::element payload);

} // namespace ctxdb::log
