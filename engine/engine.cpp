#include "engine.hpp"

#include "project/rebuild.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb {

Engine::Engine(const std::string &path, std::string_view config_json)
    : store_(path, store::parse_config(config_json)), log_(store_), sessions_(store_),
      state_(store_, log_, payloads_),
      stats_(store_, payloads_), projections_{&sessions_, &state_, &stats_} {
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

namespace {

int64_t require_session(log::EventLog &log, std::string_view session_id) {
  int64_t no = log.session_no(session_id);
  if (no == 0) throw Error(Code::kNotFound, "session '" + std::string(session_id) + "' not found");
  return no;
}

std::string state_document(std::string_view session_id, std::string_view branch_id, int64_t seq,
                           std::string_view event_id, std::string_view state_json) {
  json::JsonWriter w;
  w.begin_object()
      .field("session_id", session_id)
      .field("branch_id", branch_id)
      .field("seq", seq)
      .field("event_id", event_id)
      .raw_field("state", state_json)
      .end_object();
  return w.take();
}

} // namespace

std::string Engine::state(std::string_view session_id, std::optional<std::string_view> branch,
                          std::optional<std::string_view> at_event_id) {
  if (branch && at_event_id)
    throw Error(Code::kInvalidArg, "state: give a branch or an event to travel to (at), not both");
  store::Store::ReadTransaction snapshot(store_); // one consistent view for every read below
  std::string sid(session_id);
  int64_t session_no = require_session(log_, session_id);
  if (at_event_id) {
    std::optional<log::Event> e = log_.find(*at_event_id);
    if (!e) throw Error(Code::kNotFound, "event '" + std::string(*at_event_id) + "' not found");
    if (e->session_no != session_no)
      throw Error(Code::kInvalidArg, "event '" + e->id + "' belongs to session '" + e->session_id +
                                         "', not '" + sid + "'");
    log_.locate(*e);
    project::AgentState s = state_.at(sid, session_no, e->branch_no, e->seq);
    return state_document(sid, e->branch_id, e->seq, e->id, project::to_json(s));
  }
  log::Branch b =
      branch ? log_.tree().find_branch(session_no, *branch) : log_.tree().main_branch(session_no);
  project::State::Current c = state_.current(sid, b);
  return state_document(sid, b.id, c.seq, c.event_id, c.state_json);
}

std::string Engine::stats(std::optional<std::string_view> session_id) {
  store::Store::ReadTransaction snapshot(store_);
  if (!session_id) return stats_.get_json(std::nullopt, {});
  return stats_.get_json(require_session(log_, *session_id), *session_id);
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
