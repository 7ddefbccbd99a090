#include "project/sessions.hpp"

#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb::project {

namespace {

constexpr char kInsert[] = "INSERT INTO sessions(id,agent_id,started_event_id,created_ts,"
                           "parent_session_id,spawned_by_event_id) VALUES(?,?,?,?,?,?)";
constexpr char kSessionExists[] = "SELECT 1 FROM chains WHERE session_id=?";
constexpr char kEventInSession[] = "SELECT 1 FROM events e JOIN chains c ON "
                                   "c.session_no=e.session_no WHERE e.id=? AND c.session_id=?";

#define CTXDB_SESSION_SELECT                                                                       \
  "SELECT s.id,s.agent_id,s.started_event_id,s.created_ts,h.last_ts,"                              \
  "h.last_seq,e.payload,s.parent_session_id,s.spawned_by_event_id FROM sessions s "                \
  "JOIN chains h ON h.session_id=s.id "                                                            \
  "JOIN events e ON e.id=s.started_event_id "

constexpr char kSelectOne[] = CTXDB_SESSION_SELECT "WHERE s.id=?";
constexpr char kSelectAll[] = CTXDB_SESSION_SELECT "ORDER BY e.pos";
constexpr char kSelectSpawned[] =
    CTXDB_SESSION_SELECT "WHERE s.spawned_by_event_id=? ORDER BY e.pos";

void write_session(json::JsonWriter &w, SQLite::Statement &q) {
  w.begin_object()
      .field("id", q.getColumn(0).getString())
      .field("agent_id", q.getColumn(1).getString())
      .field("started_event_id", q.getColumn(2).getString())
      .field("created_ts", q.getColumn(3).getInt64())
      .field("last_ts", q.getColumn(4).getInt64())
      .field("event_count", q.getColumn(5).getInt64()) // seqs are gapless
      .field("last_seq", q.getColumn(5).getInt64());
  if (!q.getColumn(7).isNull()) w.field("parent_session_id", q.getColumn(7).getString());
  if (!q.getColumn(8).isNull()) w.field("spawned_by_event_id", q.getColumn(8).getString());
  w.raw_field("meta", q.getColumn(6).getString()).end_object();
}

} // namespace

std::span<const char *const> Sessions::tables() const {
  static const char *const kTables[] = {"sessions"};
  return kTables;
}

namespace {

bool exists(store::Store &store, const char *sql, std::string_view a, std::string_view b = {}) {
  auto q = store.statement(sql);
  store::bind_text(*q, 1, a);
  if (!b.empty()) store::bind_text(*q, 2, b);
  return q->executeStep();
}

std::optional<std::string> optional_string(simdjson::dom::element o, const char *key) {
  std::string_view v;
  if (o[key].get(v)) return std::nullopt;
  return std::string(v);
}

} // namespace

// A child session (a subagent's) names the session that spawned it and,
// optionally, the event there that did; both must exist.
void Sessions::check_parent(const log::Event &e, const std::optional<std::string> &parent,
                            const std::optional<std::string> &spawner) {
  std::string where = "SessionStarted '" + e.id + "': ";
  if (spawner && !parent)
    throw Error(Code::kInvalidArg,
                where + "spawned_by_event_id needs parent_session_id (the session it is in)");
  if (!parent) return;
  if (*parent == e.session_id)
    throw Error(Code::kInvalidArg, where + "a session cannot be its own parent");
  if (!exists(store_, kSessionExists, *parent))
    throw Error(Code::kNotFound, where + "parent_session_id '" + *parent + "' does not exist");
  if (spawner && !exists(store_, kEventInSession, *spawner, *parent))
    throw Error(Code::kNotFound, where + "spawned_by_event_id '" + *spawner +
                                     "' names no event of session '" + *parent + "'");
}

void Sessions::on_append(const log::Event &e) {
  if (e.type != "SessionStarted") return;
  simdjson::dom::element payload = json::parse_payload(parser_, e.payload, e.id);
  // The payload passed its schema, so agent_id is a string.
  std::string agent_id(payload["agent_id"].get_string().value());
  std::optional<std::string> parent = optional_string(payload, "parent_session_id");
  std::optional<std::string> spawner = optional_string(payload, "spawned_by_event_id");
  check_parent(e, parent, spawner);
  auto q = store_.statement(kInsert);
  q->bindNoCopy(1, e.session_id);
  q->bindNoCopy(2, agent_id);
  q->bindNoCopy(3, e.id);
  q->bind(4, e.ts);
  if (parent) q->bindNoCopy(5, *parent);
  if (spawner) q->bindNoCopy(6, *spawner);
  q->exec();
}

std::vector<std::string> Sessions::spawned_by(std::string_view event_id) {
  auto q = store_.statement(kSelectSpawned);
  store::bind_text(*q, 1, event_id);
  std::vector<std::string> out;
  while (q->executeStep()) {
    json::JsonWriter w;
    write_session(w, *q);
    out.push_back(w.take());
  }
  return out;
}

std::optional<std::string> Sessions::get_json(std::string_view id) {
  auto q = store_.statement(kSelectOne);
  store::bind_text(*q, 1, id);
  if (!q->executeStep()) return std::nullopt;
  json::JsonWriter w;
  write_session(w, *q);
  return w.take();
}

std::string Sessions::list_json() {
  auto q = store_.statement(kSelectAll);
  json::JsonWriter w;
  w.begin_array();
  while (q->executeStep()) write_session(w, *q);
  w.end_array();
  return w.take();
}

} // namespace ctxdb::project
