#include "project/sessions.hpp"

#include "json/json_writer.hpp"

namespace ctxdb::project {

namespace {

constexpr char kInsert[] = "INSERT INTO sessions(id,agent_id,started_event_id,created_ts) "
                           "VALUES(?,?,?,?)";

#define CTXDB_SESSION_SELECT                                                                       \
  "SELECT s.id,s.agent_id,s.started_event_id,s.created_ts,h.last_ts,"                              \
  "h.last_seq,e.payload FROM sessions s "                                                          \
  "JOIN chains h ON h.session_id=s.id "                                                            \
  "JOIN events e ON e.id=s.started_event_id "

constexpr char kSelectOne[] = CTXDB_SESSION_SELECT "WHERE s.id=?";
constexpr char kSelectAll[] = CTXDB_SESSION_SELECT "ORDER BY e.pos";

void write_session(json::JsonWriter &w, SQLite::Statement &q) {
  w.begin_object()
      .field("id", q.getColumn(0).getString())
      .field("agent_id", q.getColumn(1).getString())
      .field("started_event_id", q.getColumn(2).getString())
      .field("created_ts", q.getColumn(3).getInt64())
      .field("last_ts", q.getColumn(4).getInt64())
      .field("event_count", q.getColumn(5).getInt64()) // seqs are gapless
      .field("last_seq", q.getColumn(5).getInt64())
      .raw_field("meta", q.getColumn(6).getString())
      .end_object();
}

} // namespace

std::span<const char *const> Sessions::tables() const {
  static const char *const kTables[] = {"sessions"};
  return kTables;
}

void Sessions::on_append(const log::Event &e) {
  if (e.type != "SessionStarted") return;
  // The payload passed its schema, so agent_id is a string.
  std::string_view agent_id = parser_.parse(e.payload)["agent_id"].get_string().value();
  auto q = store_.statement(kInsert);
  q->bindNoCopy(1, e.session_id);
  q->bind(2, std::string(agent_id));
  q->bindNoCopy(3, e.id);
  q->bind(4, e.ts);
  q->exec();
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
