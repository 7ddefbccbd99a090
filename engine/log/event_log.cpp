#include "log/event_log.hpp"

#include "log/read_ahead.hpp"
#include "store/row_inserts.hpp"
#include "util/ids.hpp"
#include "util/sha256.hpp"

#include <simdjson.h>
#include <sqlite3.h>

#include <cstring>
#include <map>
#include <memory>

namespace ctxdb::log {

namespace {

// Events carry their session as chains.session_no; reads join the text id.
#define CTXDB_EVENT_COLUMNS                                                                        \
  "e.pos,e.id,c.session_id,e.seq,e.ts,e.type,e.actor,e.parent_id,e.run_id,"                        \
  "e.causality,e.visibility,e.payload,e.payload_hash,e.prev_hash,e.hash,e.session_no "             \
  "FROM events e JOIN chains c ON c.session_no=e.session_no "

constexpr char kSelectById[] = "SELECT " CTXDB_EVENT_COLUMNS "WHERE e.id=?";
constexpr char kSelectSession[] = "SELECT " CTXDB_EVENT_COLUMNS "WHERE c.session_id=? AND e.seq>=? "
                                  "AND e.seq<=? ORDER BY e.seq LIMIT ?";
constexpr char kSelectAll[] = "SELECT " CTXDB_EVENT_COLUMNS "WHERE e.pos>? ORDER BY e.pos LIMIT ?";
// What verify needs to tell a purged payload (schema/sql/007) from a
// removed one: whether the payload is NULL, and the purge that removed it.
#define CTXDB_PURGE_COLUMNS "e.payload IS NULL,(SELECT purged_by FROM purges WHERE event_id=e.id) "
// verify must also see events whose chain row is gone: a LEFT JOIN, with a
// made-up name for the session it cannot name.
constexpr char kVerifyAll[] =
    "SELECT e.pos,e.id,COALESCE(c.session_id,'<session_no '||e.session_no||'>'),"
    "e.seq,e.ts,e.type,e.actor,e.parent_id,e.run_id,e.causality,e.visibility,"
    "e.payload,e.payload_hash,e.prev_hash,e.hash,e.session_no," CTXDB_PURGE_COLUMNS
    "FROM events e LEFT JOIN chains c ON c.session_no=e.session_no ORDER BY e.session_no, e.seq";
constexpr char kVerifySession[] =
    "SELECT e.pos,e.id,c.session_id,e.seq,e.ts,e.type,e.actor,e.parent_id,e.run_id,"
    "e.causality,e.visibility,e.payload,e.payload_hash,e.prev_hash,e.hash,e.session_"
    "no," CTXDB_PURGE_COLUMNS
    "FROM events e JOIN chains c ON c.session_no=e.session_no WHERE c.session_id=? ORDER BY e.seq";
const store::RowInsert kInsert("INSERT INTO events(pos,id,session_no,seq,ts,type,actor,parent_id,"
                               "run_id,causality,visibility,payload,payload_hash,prev_hash,hash) "
                               "VALUES",
                               "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
constexpr char kMaxPos[] = "SELECT COALESCE(MAX(pos),0) FROM events";

constexpr char kSelectHead[] =
    "SELECT session_no,last_seq,last_hash,last_ts FROM chains WHERE session_id=?";
constexpr char kInsertChain[] =
    "INSERT INTO chains(session_id,last_seq,last_hash,last_ts) VALUES(?,0,?,0)";
constexpr char kUpdateHead[] =
    "UPDATE chains SET last_seq=?,last_hash=?,last_ts=? WHERE session_no=?";
constexpr char kAllHeads[] = "SELECT session_id,last_seq,last_hash FROM chains";
constexpr char kOneHead[] = "SELECT session_id,last_seq,last_hash FROM chains WHERE session_id=?";

// The columns of a row read by index, from a SQLiteCpp statement (the
// Store's cached ones) or from SQLite's own (a replay's, scan_all), with
// one reader of events over both.
struct CppRow {
  SQLite::Statement &q;
  bool null(int i) const { return q.getColumn(i).isNull(); }
  int64_t int64(int i) const { return q.getColumn(i).getInt64(); }
  std::string_view bytes(int i) const {
    SQLite::Column c = q.getColumn(i);
    return {static_cast<const char *>(c.getBlob()), size_t(c.getBytes())};
  }
};

struct RawRow {
  sqlite3_stmt *q;
  bool null(int i) const { return sqlite3_column_type(q, i) == SQLITE_NULL; }
  int64_t int64(int i) const { return sqlite3_column_int64(q, i); }
  std::string_view bytes(int i) const {
    const void *p = sqlite3_column_blob(q, i);
    return {static_cast<const char *>(p), size_t(sqlite3_column_bytes(q, i))};
  }
};

util::Digest read_digest(std::string_view bytes) {
  util::Digest d{};
  if (bytes.size() != d.size()) throw Error(Code::kCorrupt, "a stored hash is not 32 bytes");
  std::memcpy(d.data(), bytes.data(), d.size());
  return d;
}

util::Digest read_digest(const SQLite::Column &c) {
  return read_digest(
      std::string_view(static_cast<const char *>(c.getBlob()), size_t(c.getBytes())));
}

// Assigns into existing strings, so a reused Event reads without allocating.
template <class Row> void read_optional(const Row &row, int i, std::optional<std::string> &out) {
  if (row.null(i))
    out.reset();
  else
    out.emplace().assign(row.bytes(i));
}

template <class Row> void read_event_into(const Row &row, Event &e) {
  e.pos = row.int64(0);
  e.id.assign(row.bytes(1));
  e.session_id.assign(row.bytes(2));
  e.seq = row.int64(3);
  e.ts = row.int64(4);
  e.type.assign(row.bytes(5));
  e.actor.assign(row.bytes(6));
  read_optional(row, 7, e.parent_id);
  read_optional(row, 8, e.run_id);
  read_optional(row, 9, e.causality);
  read_optional(row, 10, e.visibility);
  if (row.null(11))
    e.payload = kRemovedPayload;
  else
    e.payload.assign(row.bytes(11));
  e.payload_hash = read_digest(row.bytes(12));
  e.prev_hash = read_digest(row.bytes(13));
  e.hash = read_digest(row.bytes(14));
  e.session_no = row.int64(15);
  e.branch_no = 0;
  e.branch_id.clear();
}

Event read_event(SQLite::Statement &q) {
  Event e;
  read_event_into(CppRow{q}, e);
  return e;
}

// Binds one event's columns at parameters offset+1 … offset+15 (kInsert.columns).
void bind_row(SQLite::Statement &q, int offset, const EventLog::PendingRow &row) {
  const Event &e = row.event;
  q.bind(offset + 1, e.pos);
  q.bindNoCopy(offset + 2, e.id);
  q.bind(offset + 3, row.session_no);
  q.bind(offset + 4, e.seq);
  q.bind(offset + 5, e.ts);
  q.bindNoCopy(offset + 6, e.type);
  q.bindNoCopy(offset + 7, e.actor);
  store::bind_optional(q, offset + 8, e.parent_id);
  store::bind_optional(q, offset + 9, e.run_id);
  store::bind_optional(q, offset + 10, e.causality);
  store::bind_optional(q, offset + 11, e.visibility);
  if (e.payload == kRemovedPayload)
    q.bind(offset + 12); // an imported event whose payload a purge removed
  else
    q.bindNoCopy(offset + 12, e.payload);
  q.bindNoCopy(offset + 13, e.payload_hash.data(), int(e.payload_hash.size()));
  q.bindNoCopy(offset + 14, e.prev_hash.data(), int(e.prev_hash.size()));
  q.bindNoCopy(offset + 15, e.hash.data(), int(e.hash.size()));
}

// An identical retry: everything the host chose matches the stored event,
// whose payload hash is that of the draft's payload as it would be stored.
bool same_content(const Event &stored, const EventDraft &d, const util::Digest &payload_hash) {
  const Event &e = d.event;
  // A parent the host left out was filled from a leaf; any is the same.
  return stored.session_id == e.session_id && stored.type == e.type && stored.actor == e.actor &&
         stored.payload_hash == payload_hash && (!e.parent_id || stored.parent_id == e.parent_id) &&
         stored.run_id == e.run_id && stored.causality == e.causality &&
         stored.visibility == e.visibility && (!d.has_ts || stored.ts == e.ts);
}

// SessionStarted opens a session and only it does.
void check_first(const Event &e, bool session_exists) {
  if (!session_exists && e.type != "SessionStarted")
    throw Error(Code::kNotFound, "session '" + e.session_id +
                                     "' does not exist (a session begins with its "
                                     "SessionStarted event; create it first)");
  if (session_exists && e.type == "SessionStarted")
    throw Error(Code::kConflict, "session '" + e.session_id +
                                     "' already exists; SessionStarted can "
                                     "only be its first event");
}

} // namespace

template <class Fn> void EventLog::for_each_line(std::string_view ndjson, Fn &&fn) {
  int64_t line_no = 0;
  while (!ndjson.empty()) {
    size_t nl = ndjson.find('\n');
    std::string_view line = ndjson.substr(0, nl);
    ndjson = nl == std::string_view::npos ? std::string_view{} : ndjson.substr(nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    try {
      fn(line);
    } catch (const Error &e) {
      throw Error(e.code(), "line " + std::to_string(line_no) + ": " + e.what());
    } catch (const SQLite::Exception &e) {
      Error err = store::to_error(e);
      throw Error(err.code(), "line " + std::to_string(line_no) + ": " + err.what());
    }
  }
}

EventLog::Head *EventLog::head(Writes &w, const std::string &session_id) {
  if (auto it = w.heads.find(session_id); it != w.heads.end()) return &it->second;
  auto q = store_.statement(kSelectHead);
  q->bindNoCopy(1, session_id);
  if (!q->executeStep()) return nullptr;
  Head h;
  h.session_no = q->getColumn(0).getInt64();
  h.seq = q->getColumn(1).getInt64();
  h.hash = read_digest(q->getColumn(2));
  h.ts = q->getColumn(3).getInt64();
  return &w.heads.emplace(session_id, h).first->second;
}

EventLog::Head *EventLog::new_chain(Writes &w, const std::string &session_id) {
  util::Digest zero{};
  auto q = store_.statement(kInsertChain);
  q->bindNoCopy(1, session_id);
  q->bindNoCopy(2, zero.data(), int(zero.size()));
  q->exec();
  Head h;
  h.session_no = store_.db().getLastInsertRowid();
  return &w.heads.emplace(session_id, h).first->second;
}

template <class Fn> auto EventLog::write(Fn &&fn, const Answer &answer) {
  store::Store::WriteTransaction tx(store_);
  try {
    Writes w;
    auto result = fn(w);
    finish(w);
    if (answer) answer();
    tx.commit();
    return result;
  } catch (...) {
    discard();
    throw;
  }
}

void EventLog::discard() {
  tree_.discard();
  for (EventObserver *o : observers_) o->discard();
}

int64_t EventLog::session_no(std::string_view session_id) {
  auto q = store_.statement(kSelectHead);
  store::bind_text(*q, 1, session_id);
  return q->executeStep() ? q->getColumn(0).getInt64() : 0;
}

void EventLog::finish(Writes &w) {
  flush(w);
  for (auto &[session_id, h] : w.heads) {
    if (!h.dirty) continue;
    auto q = store_.statement(kUpdateHead);
    q->bind(1, h.seq);
    q->bindNoCopy(2, h.hash.data(), int(h.hash.size()));
    q->bind(3, h.ts);
    q->bind(4, h.session_no);
    q->exec();
    h.dirty = false;
  }
  tree_.flush();
  for (EventObserver *o : observers_) o->flush();
}

const Event &EventLog::enqueue(Event &&e, Head &h, Writes &w, int64_t parent_seq) {
  if (w.next_pos == 0) {
    auto q = store_.statement(kMaxPos);
    q->executeStep();
    w.next_pos = q->getColumn(0).getInt64() + 1;
  }
  e.pos = w.next_pos++;
  h.seq = e.seq;
  h.hash = e.hash;
  h.ts = e.ts;
  h.dirty = true;
  tree_.place(e, h.session_no, parent_seq);
  // An event that opens a branch (SessionStarted opens main) is rare, and
  // its projections look back: a child session at the event that spawned
  // it, a new branch's state at its fork point. So is a compaction, which
  // looks up its first kept event. Writing what is queued first lets them
  // read every earlier event from the table.
  if (e.branch_id == e.id || e.type == "CompactionCompleted") flush(w);
  for (EventObserver *o : observers_) o->on_append(e);
  e.parsed_payload.reset(); // the next line's parse ends it
  // Flushing before the push keeps the returned reference valid until the
  // next placement.
  if (w.pending.size() == store::kRowsPerInsert) flush(w);
  w.pending.push_back({std::move(e), h.session_no});
  return w.pending.back().event;
}

void EventLog::flush(Writes &w) {
  store::insert_rows(store_, kInsert, std::span<const PendingRow>(w.pending), bind_row);
  w.pending.clear();
}

const Event *EventLog::find_pending(const Writes &w, std::string_view id) const {
  for (const PendingRow &row : w.pending)
    if (row.event.id == id) return &row.event;
  return nullptr;
}

// A parent must be an event already in the same session.
int64_t EventLog::check_parent(const Event &e, const Writes &w) {
  if (!e.parent_id) return 0;
  std::optional<Event> stored;
  const Event *parent = find_pending(w, *e.parent_id);
  if (!parent && (stored = find(*e.parent_id))) parent = &*stored;
  if (!parent || parent->session_id != e.session_id) {
    // A fork's parent is its fork point, which the host gave as
    // payload.fork_event_id (event_id, through the fork call).
    std::string what = e.type == "BranchCreated"
                           ? "the fork point '" + *e.parent_id + "' (fork_event_id)"
                           : "parent_id '" + *e.parent_id + "'";
    throw Error(Code::kNotFound, what + " names no event of session '" + e.session_id + "'");
  }
  return parent->seq;
}

// The event this transaction or the log already holds under `id`, if any;
// an identical one is returned, a different one is a conflict.
template <class Same> const Event *EventLog::prior(Writes &w, const std::string &id, Same &&same) {
  const Event *found = find_pending(w, id);
  if (!found) {
    auto stored = find(id);
    if (!stored) return nullptr;
    w.found = std::move(*stored);
    locate(w.found);
    found = &w.found;
  }
  if (!same(*found))
    throw Error(Code::kConflict, "event id '" + id + "' already exists with different content");
  return found;
}

void EventLog::spill(Event &e, int64_t session_no, int64_t parent_seq) {
  if (!spiller_ || parent_seq == 0 || !spiller_->may_change(e)) return;
  SpillPlace at{session_no, tree_.branch_of(session_no, parent_seq), parent_seq};
  std::optional<Spill> s = spiller_->plan(e, at);
  if (!s) return;
  spiller_->store(*s, e.id);
  e.payload = std::move(s->payload);
  e.payload_hash = util::sha256(e.payload);
  e.parsed_payload.reset(); // it parsed what the spill replaced
}

util::Digest EventLog::retry_hash(const EventDraft &d, const Event &stored) {
  const Event &e = d.event;
  if (!spiller_ || stored.payload_hash == e.payload_hash || !spiller_->may_change(e))
    return e.payload_hash;
  // The stored event's call (if any) is on its path before it.
  std::optional<Spill> s =
      spiller_->plan(e, SpillPlace{stored.session_no, stored.branch_no, stored.seq - 1});
  return s ? util::sha256(s->payload) : e.payload_hash;
}

const Event &EventLog::place(EventDraft &d, Writes &w) {
  Event &e = d.event;
  if (d.has_id) {
    // A retry that names a branch names the one its event went to (an
    // unknown branch is kNotFound, as for any append).
    auto same = [&](const Event &s) {
      return same_content(s, d, retry_hash(d, s)) &&
             (!d.branch || tree_.find_branch(s.session_no, *d.branch).no == s.branch_no);
    };
    if (const Event *p = prior(w, e.id, same)) return *p;
  }
  Head *h = head(w, e.session_id);
  check_first(e, h != nullptr);
  int64_t parent_seq = tree_.resolve_parent(d, h ? h->session_no : 0);
  if (parent_seq == 0) parent_seq = check_parent(e, w);
  if (!h) h = new_chain(w, e.session_id);
  e.seq = h->seq + 1;
  e.prev_hash = h->hash;
  if (!d.has_ts) e.ts = util::now_ms();
  if (!d.has_id) e.id = util::new_id("evt_");
  spill(e, h->session_no, parent_seq);
  e.hash = chain_hash(e);
  // The draft is spent; no copy of the payload.
  return enqueue(std::move(e), *h, w, parent_seq);
}

bool EventLog::place_imported(Event &imported, Writes &w) {
  std::string json = to_json(imported);
  if (prior(w, imported.id, [&](const Event &s) { return to_json(s) == json; })) return false;
  Head *h = head(w, imported.session_id);
  check_first(imported, h != nullptr);
  int64_t expected = h ? h->seq + 1 : 1;
  if (imported.seq != expected)
    throw Error(Code::kCorrupt, "event '" + imported.id + "' has seq " +
                                    std::to_string(imported.seq) + " but session '" +
                                    imported.session_id + "' expects seq " +
                                    std::to_string(expected) + " next");
  if (imported.prev_hash != (h ? h->hash : util::Digest{}))
    throw Error(Code::kCorrupt, "event '" + imported.id +
                                    "': prev_hash does not match the hash of "
                                    "the event before it");
  if (chain_hash(imported) != imported.hash)
    throw Error(Code::kCorrupt, "event '" + imported.id + "': hash does not match its content");
  int64_t parent_seq = check_parent(imported, w);
  if (!h) h = new_chain(w, imported.session_id);
  std::string claimed_branch = std::move(imported.branch_id);
  const Event &placed = enqueue(std::move(imported), *h, w, parent_seq);
  if (!claimed_branch.empty() && claimed_branch != placed.branch_id)
    throw Error(Code::kCorrupt, "event '" + placed.id + "' claims branch '" + claimed_branch +
                                    "' but its parent places it on '" + placed.branch_id + "'");
  return true;
}

Event EventLog::append_one(EventDraft &d, const Answer &answer) {
  return write([&](Writes &w) { return Event(place(d, w)); }, answer);
}

Event EventLog::create_session(std::string_view json) {
  EventDraft d = parser_.parse_session_create(json);
  return append_one(d);
}

Event EventLog::append(std::string_view session_id, std::string_view json, const Answer &answer) {
  EventDraft d = parser_.parse_append(json, session_id);
  return append_one(d, answer);
}

BatchResult EventLog::append_batch(std::string_view session_id, std::string_view ndjson,
                                   const Answer &answer) {
  return write(
      [&](Writes &w) {
        BatchResult r;
        for_each_line(ndjson, [&](std::string_view line) {
          EventDraft d = parser_.parse_append(line, session_id);
          const Event &e = place(d, w);
          if (r.count++ == 0) r.first_seq = e.seq;
          r.last_seq = e.seq;
          r.last_id = e.id;
        });
        // No line to fail on: an unknown session must still be an error.
        if (r.count == 0 && !head(w, std::string(session_id)))
          throw Error(Code::kNotFound, "session '" + std::string(session_id) + "' not found");
        return r;
      },
      answer);
}

void EventLog::write_batch(const std::function<void(Batch &)> &fn) {
  write([&](Writes &w) {
    Batch batch(*this, w);
    fn(batch);
    return 0;
  });
}

const Event &EventLog::Batch::create_session(std::string_view json) {
  EventDraft d = log_.parser_.parse_session_create(json);
  return log_.place(d, w_);
}

const Event &EventLog::Batch::append(std::string_view session_id, std::string_view json) {
  EventDraft d = log_.parser_.parse_append(json, session_id);
  return log_.place(d, w_);
}

ImportResult EventLog::import(std::string_view ndjson, const ImportExtras *extras) {
  return write([&](Writes &w) {
    ImportResult r;
    for_each_line(ndjson, [&](std::string_view line) {
      if (extras && extras->take(line)) return;
      Event e = parser_.parse_stored(line);
      if (place_imported(e, w))
        ++r.imported;
      else
        ++r.skipped;
    });
    if (extras) extras->end();
    return r;
  });
}

std::optional<Event> EventLog::find(std::string_view id) {
  auto q = store_.statement(kSelectById);
  store::bind_text(*q, 1, id);
  if (!q->executeStep()) return std::nullopt;
  return read_event(*q);
}

void EventLog::locate(std::span<Event> events) {
  Segment run; // the run of the previous event, reused while it covers
  int64_t run_session = 0;
  std::string branch_id;
  for (Event &e : events) {
    if (e.session_no != run_session || e.seq < run.first_seq || e.seq > run.last_seq) {
      run = tree_.run_at(e.session_no, e.seq);
      run_session = e.session_no;
      branch_id = tree_.branch(run.branch_no).id;
    }
    e.branch_no = run.branch_no;
    e.branch_id = branch_id;
  }
}

bool EventLog::session_exists(std::string_view session_id) {
  auto q = store_.statement(kSelectHead);
  store::bind_text(*q, 1, session_id);
  return q->executeStep();
}

std::vector<Event> EventLog::read_session(std::string_view session_id, int64_t from_seq,
                                          int64_t to_seq, int64_t limit) {
  auto q = store_.statement(kSelectSession);
  store::bind_text(*q, 1, session_id);
  q->bind(2, from_seq);
  q->bind(3, to_seq < 0 ? INT64_MAX : to_seq);
  q->bind(4, limit);
  std::vector<Event> out;
  while (q->executeStep()) out.push_back(read_event(*q));
  return out;
}

namespace {

constexpr char kSelectEveryEvent[] = "SELECT " CTXDB_EVENT_COLUMNS "ORDER BY e.pos";

void decode_raw(sqlite3_stmt *row, Event &e) { read_event_into(RawRow{row}, e); }

} // namespace

// A replay reads every event once, through SQLite's C API: SQLiteCpp's
// Column adds a shared_ptr copy to each of the sixteen values of a row
// (reading events was a tenth of a replay).
void EventLog::scan_all(const std::function<void(Event &)> &fn) {
  if (store_.has_file()) {
    ReadAhead ahead(store_, kMaxPos, kSelectEveryEvent, decode_raw);
    // The reader sees the last commit: if this connection has appended
    // since (inside a transaction of its own), it reads here instead.
    auto q = store_.statement(kMaxPos);
    q->executeStep();
    if (ahead.last_pos() == q->getColumn(0).getInt64()) {
      for (std::span<Event> batch = ahead.next(); !batch.empty(); batch = ahead.next())
        for (Event &e : batch) fn(e);
      return;
    }
  }
  sqlite3 *db = store_.db().getHandle();
  sqlite3_stmt *raw = nullptr;
  if (int rc = sqlite3_prepare_v2(db, kSelectEveryEvent, -1, &raw, nullptr); rc != SQLITE_OK)
    throw SQLite::Exception(db, rc);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt *)> q(raw, sqlite3_finalize);
  Event e;
  int rc;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    decode_raw(raw, e);
    fn(e);
  }
  if (rc != SQLITE_DONE) throw SQLite::Exception(db, rc);
}

std::vector<Event> EventLog::read_all(int64_t after_pos, int64_t limit) {
  auto q = store_.statement(kSelectAll);
  q->bind(1, after_pos);
  q->bind(2, limit);
  std::vector<Event> out;
  while (q->executeStep()) out.push_back(read_event(*q));
  return out;
}

namespace {

constexpr char kPurgeEvent[] =
    "SELECT session_no,seq,type,payload,payload_hash FROM events WHERE id=?";
constexpr char kOrphanPurge[] =
    "SELECT event_id,purged_by FROM purges p "
    "WHERE NOT EXISTS (SELECT 1 FROM events WHERE id=p.event_id) LIMIT 1";

// Checks a removed payload against the purge its purges row names: only
// the log proves a removal (memory/purger.hpp), the row only says where
// to look.
class PurgeProofs {
public:
  explicit PurgeProofs(store::Store &store) : store_(store) {}

  // Why `purged_by` does not prove that it removed `e`'s payload; empty
  // when it does.
  std::string unproven(const Event &e, const std::string &purged_by) {
    // As the purger allows: only a memory's events are ever purged.
    if (!e.type.starts_with("Memory"))
      return "payload was removed, but a " + e.type +
             " payload is never purged (only a memory's events are)";
    std::string by = "purged by '" + purged_by + "'";
    auto q = store_.statement(kPurgeEvent);
    store::bind_text(*q, 1, purged_by);
    if (!q->executeStep())
      return "payload was removed; its purge record names '" + purged_by +
             "', which is no event of this file";
    std::string type = q->getColumn(2).getString();
    if (q->getColumn(0).getInt64() != e.session_no)
      return "payload was removed, " + by +
             " of another session: a purge proves only its own chain's payloads";
    if (q->getColumn(1).getInt64() <= e.seq)
      return "payload was removed, " + by + ", which comes before it in the chain";
    if (type != "MemoryDeleted")
      return "payload was removed, " + by + ", a " + type + ", which cannot purge";
    if (q->getColumn(3).isNull())
      return "payload was removed, " + by + ", whose own payload is removed";
    std::string payload = q->getColumn(3).getString();
    if (util::sha256(payload) != read_digest(q->getColumn(4)))
      return "payload was removed, " + by + ", whose payload was modified";
    simdjson::dom::element p;
    std::string_view mode;
    if (parser_.parse(payload).get(p) || p["mode"].get(mode) || mode != "purge")
      return "payload was removed, " + by + ", a MemoryDeleted that is not a purge";
    simdjson::dom::array proofs;
    if (p["purged"].get(proofs))
      return "payload was removed, unproven: " + by +
             ", which lists no payload hashes (a purge written before purges carried them)";
    std::string hash = util::to_hex(e.payload_hash);
    bool listed = false;
    for (simdjson::dom::element proof : proofs) {
      std::string_view id, proof_hash;
      if (proof["event_id"].get(id) || id != e.id) continue;
      listed = true;
      if (!proof["payload_hash"].get(proof_hash) && proof_hash == hash) return "";
    }
    if (listed) return "payload was removed, " + by + ", which lists it with another payload_hash";
    return "payload was removed, " + by + ", which does not list it";
  }

private:
  store::Store &store_;
  simdjson::dom::parser parser_;
};

// Walks events in (session, seq) order and compares each chain with the
// head recorded for it; stops at the first broken event.
class ChainChecker {
public:
  ChainChecker(VerifyReport &r, std::map<std::string, std::pair<int64_t, util::Digest>> heads,
               PurgeProofs &proofs)
      : r_(r), heads_(std::move(heads)), proofs_(proofs) {}

  // `removed`: the payload is NULL; `purged_by`: the purge that removed it.
  bool check(const Event &e, bool removed, const std::string &purged_by) {
    if (e.session_id != session_) {
      if (!finish_session()) return false;
      session_ = e.session_id;
      expected_ = 1;
      prev_ = util::Digest{};
      ++r_.sessions;
    }
    ++r_.events;
    std::string problem;
    if (e.seq > expected_)
      problem = "seq gap: events before it are missing";
    else if (e.seq < expected_)
      problem = "seq out of order";
    else if (e.prev_hash != prev_)
      problem = "prev_hash does not link to the event before it (an event "
                "was deleted, inserted or reordered)";
    else if (removed && purged_by.empty())
      problem = "payload was removed, and no purge record names the event that removed it";
    else if (!removed && util::sha256(e.payload) != e.payload_hash)
      problem = "payload was modified (payload_hash mismatch)";
    else if (!removed && !purged_by.empty())
      problem = "a purge record names it (purged by '" + purged_by + "'), but its payload is there";
    else if (chain_hash(e) != e.hash)
      problem = "event was modified (hash mismatch)";
    else if (removed)
      problem = proofs_.unproven(e, purged_by);
    if (!problem.empty()) return fail(e.session_id, e.seq, e.id, problem);
    if (removed) r_.purged.push_back({e.session_id, e.seq, e.id, purged_by});
    prev_ = e.hash;
    ++expected_;
    return true;
  }

  // Called after the last event: every head must match its chain's end,
  // and a head without events means the events were deleted.
  bool finish() {
    if (!finish_session()) return false;
    if (heads_.empty()) return true;
    const auto &[session_id, head] = *heads_.begin();
    return fail(session_id, head.first, "",
                "the session's events are missing (its chain head records seq " +
                    std::to_string(head.first) + ")");
  }

  // A purge record of an event the file does not hold (whole-file checks).
  bool orphan_purge(const std::string &event_id, const std::string &purged_by) {
    return fail("", 0, event_id,
                "a purge record (purged by '" + purged_by + "') names no event of this file");
  }

private:
  bool finish_session() {
    if (session_.empty()) return true;
    auto it = heads_.find(session_);
    int64_t last = expected_ - 1;
    if (it == heads_.end()) return fail(session_, last, "", "the session has no chain head");
    auto [head_seq, head_hash] = it->second;
    heads_.erase(it);
    if (head_seq > last)
      return fail(session_, last + 1, "",
                  "events after seq " + std::to_string(last) +
                      " are missing (the chain head records seq " + std::to_string(head_seq) + ")");
    if (head_seq != last || head_hash != prev_)
      return fail(session_, last, "", "the chain head does not match the last event");
    return true;
  }

  bool fail(const std::string &session_id, int64_t seq, const std::string &id,
            const std::string &problem) {
    r_.ok = false;
    r_.session_id = session_id;
    r_.seq = seq;
    r_.event_id = id;
    r_.problem = problem;
    return false;
  }

  VerifyReport &r_;
  std::map<std::string, std::pair<int64_t, util::Digest>> heads_;
  PurgeProofs &proofs_;
  std::string session_;
  int64_t expected_ = 1;
  util::Digest prev_{};
};

} // namespace

VerifyReport EventLog::verify(std::optional<std::string_view> session_id) {
  store::Store::ReadTransaction snapshot(store_);
  std::map<std::string, std::pair<int64_t, util::Digest>> heads;
  {
    auto q = store_.statement(session_id ? kOneHead : kAllHeads);
    if (session_id) store::bind_text(*q, 1, *session_id);
    while (q->executeStep())
      heads[q->getColumn(0).getString()] = {q->getColumn(1).getInt64(),
                                            read_digest(q->getColumn(2))};
  }
  VerifyReport r;
  PurgeProofs proofs(store_);
  ChainChecker checker(r, std::move(heads), proofs);
  auto q = store_.statement(session_id ? kVerifySession : kVerifyAll);
  if (session_id) store::bind_text(*q, 1, *session_id);
  bool ok = true;
  while (ok && q->executeStep()) {
    bool removed = q->getColumn(16).getInt() != 0;
    ok = checker.check(read_event(*q), removed,
                       q->getColumn(17).isNull() ? std::string() : q->getColumn(17).getString());
  }
  if (ok) ok = checker.finish();
  if (ok && !session_id) {
    auto orphan = store_.statement(kOrphanPurge);
    if (orphan->executeStep())
      checker.orphan_purge(orphan->getColumn(0).getString(), orphan->getColumn(1).getString());
  }
  if (session_id && r.ok && r.sessions == 0)
    throw Error(Code::kNotFound, "session '" + std::string(*session_id) + "' not found");
  return r;
}

} // namespace ctxdb::log
