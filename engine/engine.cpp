#include "engine.hpp"

#include "project/rebuild.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb {

Engine::Engine(const std::string &path, std::string_view config_json)
    : store_(path, store::parse_config(config_json)), log_(store_),
      sessions_(store_), projections_{&sessions_} {
  for (project::Projection *p : projections_) log_.add_observer(p);
}

std::string Engine::session_create(std::string_view json) {
  log::Event started = log_.create_session(json);
  return session_get(started.session_id);
}

std::string Engine::session_get(std::string_view id) {
  if (auto s = sessions_.get_json(id)) return *s;
  throw Error(Code::kNotFound, "session '" + std::string(id) + "' not found");
}

std::string Engine::session_list() { return sessions_.list_json(); }

std::string Engine::append(std::string_view session_id, std::string_view json) {
  return log::to_json(log_.append(session_id, json));
}

std::string Engine::append_batch(std::string_view session_id, std::string_view ndjson) {
  log::BatchResult r = log_.append_batch(session_id, ndjson);
  json::JsonWriter w;
  w.begin_object()
      .field("count", r.count)
      .field("first_seq", r.first_seq)
      .field("last_seq", r.last_seq)
      .field("last_id", r.last_id)
      .end_object();
  return w.take();
}

std::string Engine::import(std::string_view ndjson) {
  log::ImportResult r = log_.import(ndjson);
  json::JsonWriter w;
  w.begin_object().field("imported", r.imported).field("skipped", r.skipped).end_object();
  return w.take();
}

bool Engine::session_exists(std::string_view id) { return log_.session_exists(id); }

std::string Engine::event_get(std::string_view id) {
  if (auto e = log_.find(id)) {
    log_.locate(*e);
    return log::to_json(*e);
  }
  throw Error(Code::kNotFound, "event '" + std::string(id) + "' not found");
}

std::string Engine::verify(std::optional<std::string_view> session_id) {
  log::VerifyReport r = log_.verify(session_id);
  json::JsonWriter w;
  w.begin_object().key("ok").boolean(r.ok).field("sessions", r.sessions).field("events", r.events);
  if (!r.ok) {
    w.key("first_broken")
        .begin_object()
        .field("session_id", r.session_id)
        .field("seq", r.seq)
        .field("event_id", r.event_id)
        .field("problem", r.problem)
        .end_object();
  }
  w.end_object();
  return w.take();
}

std::string Engine::rebuild(std::string_view options_json) {
  bool check = false;
  if (!options_json.empty()) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc = json::parse(parser, options_json, "rebuild options");
    store::embedded_schema("json/rebuild_options.schema.json").validate(doc, "");
    if (doc["check"].get(check)) check = false; // absent: no check
  }
  project::RebuildReport r = project::rebuild(store_, log_, projections_, check);
  json::JsonWriter w;
  w.begin_object().field("events", r.events).key("identical").boolean(r.identical);
  w.key("tables").begin_array();
  for (const auto &t : r.tables)
    w.begin_object()
        .field("table", t.table)
        .field("rows", t.rows)
        .field("before", t.before)
        .field("after", t.after)
        .end_object();
  w.end_array().end_object();
  return w.take();
}

std::vector<std::string> Engine::events_page(std::optional<std::string_view> session_id,
                                             int64_t &cursor, int64_t to_seq, int64_t limit) {
  std::vector<log::Event> events = session_id
                                       ? log_.read_session(*session_id, cursor + 1, to_seq, limit)
                                       : log_.read_all(cursor, limit);
  log_.locate(events);
  std::vector<std::string> rows;
  rows.reserve(events.size());
  for (const auto &e : events) {
    cursor = session_id ? e.seq : e.pos;
    rows.push_back(log::to_json(e));
  }
  return rows;
}

} // namespace ctxdb
