#include "log/event_parser.hpp"

#include "error.hpp"
#include "store/embedded_files.hpp"
#include "store/store.hpp"
#include "util/ids.hpp"
#include "json/json_schema.hpp"
#include "json/parse.hpp"

#include <map>
#include <string>

namespace ctxdb::log {

namespace {

// Payload schemas of the core types, by type name. Built once, read-only.
const std::map<std::string, json::Schema, std::less<>> &payload_schemas() {
  static const auto schemas = [] {
    std::map<std::string, json::Schema, std::less<>> m;
    const std::string_view prefix = "json/events/", suffix = ".schema.json";
    for (const auto &f : store::embedded_files()) {
      if (!f.path.starts_with(prefix) || !f.path.ends_with(suffix)) continue;
      std::string_view type =
          f.path.substr(prefix.size(), f.path.size() - prefix.size() - suffix.size());
      m.emplace(std::string(type), json::Schema::parse(f.content, f.path));
    }
    return m;
  }();
  return schemas;
}

const json::Schema &event_schema() { return store::embedded_schema("json/event.schema.json"); }
const json::Schema &session_create_schema() {
  return store::embedded_schema("json/session_create.schema.json");
}
const json::Schema &stored_event_schema() {
  return store::embedded_schema("json/stored_event.schema.json");
}

std::optional<std::string> optional_string(simdjson::dom::object o, std::string_view key) {
  std::string_view v;
  if (o[key].get(v)) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> optional_json(simdjson::dom::object o, std::string_view key) {
  simdjson::dom::element e;
  if (o[key].get(e)) return std::nullopt;
  return json::canonical(e);
}

std::string required_string(simdjson::dom::object o, std::string_view key) {
  return std::string(o[key].get_string().value());
}

// Fields common to every envelope: validated already, so only read here.
void read_header(simdjson::dom::object o, Event &e) {
  e.type = required_string(o, "type");
  e.actor = required_string(o, "actor");
  e.parent_id = optional_string(o, "parent_id");
  e.run_id = optional_string(o, "run_id");
  e.causality = optional_json(o, "causality");
  e.visibility = optional_json(o, "visibility");
}

// `text_size`, the size of the event's text, bounds the payload's: its
// canonical form is built without regrowing.
void read_payload(simdjson::dom::object o, Event &e, size_t text_size) {
  simdjson::dom::element payload = o["payload"].value();
  validate_payload(e.type, payload);
  bool retyped = false;
  e.payload = json::canonical(payload, text_size, retyped);
  e.payload_hash = util::sha256(e.payload);
  // Projections read the payload as a rebuild will: parsed from its stored
  // form. The host's parse is that, unless a number changed type on the
  // way (250.0 is stored as 250, which a rebuild reads as an integer).
  if (!retyped) e.parsed_payload = payload;
}

// A host's draft: ts is the host's when given, else the log's at append.
void read_ts_and_payload(simdjson::dom::object o, EventDraft &d, size_t text_size) {
  int64_t ts = 0;
  if (!o["ts"].get(ts)) { // the schema took it: an integer that fits int64
    d.event.ts = ts;
    d.has_ts = true;
  }
  read_payload(o, d.event, text_size);
}

void read_digest(simdjson::dom::object o, std::string_view key, util::Digest &out) {
  // The schema's pattern already guarantees 64 lowercase hex digits.
  util::from_hex(o[key].get_string().value(), out);
}

} // namespace

void validate_payload(std::string_view type, simdjson::dom::element payload) {
  const auto &schemas = payload_schemas();
  auto it = schemas.find(type);
  if (it == schemas.end()) return;
  try {
    it->second.validate(payload, "payload");
  } catch (const Error &e) {
    throw Error(e.code(), std::string(type) + ": " + e.what());
  }
}

EventDraft EventParser::parse_append(std::string_view text, std::string_view session_id) {
  simdjson::dom::element doc = json::parse(parser_, text, "event");
  event_schema().validate(doc, "");
  simdjson::dom::object o = doc.get_object().value();
  EventDraft d;
  Event &e = d.event;
  e.session_id = std::string(session_id);
  if (auto sid = optional_string(o, "session_id"); sid && *sid != session_id)
    throw Error(Code::kInvalidArg, "event names session '" + *sid + "' but is appended to '" +
                                       std::string(session_id) + "'");
  read_header(o, e);
  d.branch = optional_string(o, "branch_id");
  if (auto id = optional_string(o, "id")) {
    e.id = *id;
    d.has_id = true;
  }
  read_ts_and_payload(o, d, text.size());
  return d;
}

EventDraft EventParser::parse_session_create(std::string_view text) {
  simdjson::dom::element doc = json::parse(parser_, text, "session");
  session_create_schema().validate(doc, "");
  simdjson::dom::object o = doc.get_object().value();
  EventDraft d;
  Event &e = d.event;
  e.type = "SessionStarted";
  e.actor = optional_string(o, "actor").value_or("host");
  e.session_id = optional_string(o, "id").value_or(util::new_id("ses_"));
  if (auto id = optional_string(o, "event_id")) {
    e.id = *id;
    d.has_id = true;
  }
  read_ts_and_payload(o, d, text.size());
  return d;
}

Event EventParser::parse_stored(std::string_view text) {
  simdjson::dom::element doc = json::parse(parser_, text, "event");
  stored_event_schema().validate(doc, "");
  simdjson::dom::object o = doc.get_object().value();
  Event e;
  e.id = required_string(o, "id");
  e.session_id = required_string(o, "session_id");
  e.seq = o["seq"].get_int64().value();
  e.ts = o["ts"].get_int64().value();
  read_header(o, e);
  e.branch_id = optional_string(o, "branch_id").value_or("");
  util::Digest claimed{};
  read_digest(o, "payload_hash", claimed);
  if (o["payload"].value().is_null()) {
    // Removed by a privacy purge: only a Memory event's payload can be, and
    // its hash is all that is left to chain. verify reports it, with the
    // purge that removed it once that is imported too.
    if (!e.type.starts_with("Memory"))
      throw Error(Code::kCorrupt,
                  "event '" + e.id + "': a " + e.type + " payload cannot be removed (null)");
    e.payload = std::string(kRemovedPayload);
    e.payload_hash = claimed;
  } else {
    read_payload(o, e, text.size());
    if (claimed != e.payload_hash)
      throw Error(Code::kCorrupt, "event '" + e.id + "': payload does not match its payload_hash");
  }
  read_digest(o, "prev_hash", e.prev_hash);
  read_digest(o, "hash", e.hash);
  return e;
}

} // namespace ctxdb::log
