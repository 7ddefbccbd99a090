// event.hpp — an event as the log stores it, and its JSON form.
#pragma once

#include "util/sha256.hpp"

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ctxdb::log {

// The payload text of an event whose payload a purge removed: the column
// is NULL, read (and exported) as JSON null. Appended payloads are always
// objects, so it names nothing else.
inline constexpr std::string_view kRemovedPayload = "null";

struct Event {
  int64_t pos = 0; // global append order (0 until stored)
  std::string id;
  std::string session_id;
  int64_t seq = 0;
  int64_t ts = 0; // ms since the Unix epoch
  std::string type;
  std::string actor;
  std::optional<std::string> parent_id;
  std::optional<std::string> run_id;
  std::optional<std::string> causality;  // compact JSON
  std::optional<std::string> visibility; // compact JSON
  std::string payload;                   // compact canonical JSON
  // While the log's observers see the event (on_append): the payload as
  // parsed from the line it came in, the values `payload` holds in
  // canonical form, so projections need not parse it again. Borrowed from
  // the log's parser, so valid only until the next line is parsed; unset
  // once a spill rewrote the payload. Neither stored nor hashed.
  std::optional<simdjson::dom::element> parsed_payload;
  util::Digest payload_hash{};
  util::Digest prev_hash{};
  util::Digest hash{};
  // Where the session tree put it (log/tree.hpp): derived from parent_id
  // and append order, so not hashed, and rebuilt with the projections.
  int64_t session_no = 0;
  int64_t branch_no = 0;
  std::string branch_id;
};

// A host's event before the log gives it a place: which of id and ts the
// host chose itself.
struct EventDraft {
  Event event;
  bool has_id = false;
  bool has_ts = false;
  // The envelope's branch_id: append after that branch's leaf.
  std::optional<std::string> branch;
};

// The stored-event JSON of schema/json/stored_event.schema.json: what
// reads, iterators and export return, and what import takes.
std::string to_json(const Event &e);

// The bytes the chain hashes besides prev_hash and payload_hash: every
// header field in a fixed order, as compact JSON with a format version.
std::string canonical_header(const Event &e);

// SHA-256(prev_hash ‖ canonical_header ‖ payload_hash).
util::Digest chain_hash(const Event &e);

// Whether an event's visibility (compact JSON; empty: none) withholds it
// from whoever is not allowed sensitive content: "sensitive", "private"
// or "secret", or an object saying so ({"level": one of those} or
// {"sensitive": true}). The compiler withholds such an event's text and
// session search leaves it out, unless allow_sensitive.
bool is_sensitive(simdjson::dom::parser &parser, std::string_view visibility);

} // namespace ctxdb::log
