#include "memory/memories.hpp"

#include "error.hpp"
#include "memory/number.hpp"
#include "memory/scope_rows.hpp"
#include "memory/search_text.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>

namespace ctxdb::memory {

using project::string_field;

namespace {

constexpr char kInsertVersion[] =
    "INSERT INTO memory_versions(memory_id,version,session_no,seq,event_id,scope,scope_id,kind,"
    "content,source_refs,keywords,readers,confidence,priority,sensitive,expires_at,update_policy,"
    "valid_from) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kLastVersion[] =
    "SELECT version,scope,scope_id,kind,content,source_refs,keywords,readers,confidence,priority,"
    "sensitive,expires_at,update_policy,valid_to,valid_from FROM memory_versions WHERE memory_id=? "
    "ORDER BY version DESC LIMIT 1";
constexpr char kEndVersion[] =
    "UPDATE memory_versions SET valid_to=?,ended_by=? WHERE memory_id=? AND version=?";
constexpr char kClearContent[] =
    "UPDATE memory_versions SET content=NULL,keywords='[]' WHERE memory_id=?";
constexpr char kDeleteVersions[] = "DELETE FROM memory_versions WHERE memory_id=?";
#define CTXDB_CURRENT_COLUMNS                                                                      \
  "doc_id,memory_id,version,scope_key,sensitive,readers,confidence,priority,expires_at,"           \
  "valid_from,search_content,search_keywords"
// A transaction's new memories rows wait in this connection's temp table
// (flush()). The connection's, not the file's: nothing else sees it.
constexpr char kCreatePending[] =
    "CREATE TEMP TABLE IF NOT EXISTS memories_pending(doc_id INTEGER PRIMARY KEY,memory_id,"
    "version,scope_key,sensitive,readers,confidence,priority,expires_at,valid_from,"
    "search_content,search_keywords)";
constexpr char kInsertPending[] =
    "INSERT INTO temp.memories_pending(" CTXDB_CURRENT_COLUMNS ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kInsertFromPending[] =
    "INSERT INTO main.memories(" CTXDB_CURRENT_COLUMNS ") SELECT " CTXDB_CURRENT_COLUMNS
    " FROM temp.memories_pending ORDER BY doc_id";
constexpr char kClearPending[] = "DELETE FROM temp.memories_pending";
constexpr char kInsertCurrent[] =
    "INSERT INTO main.memories(" CTXDB_CURRENT_COLUMNS ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kUpdateCurrent[] =
    "UPDATE memories SET version=?3,scope_key=?4,sensitive=?5,readers=?6,confidence=?7,"
    "priority=?8,expires_at=?9,valid_from=?10,search_content=?11,search_keywords=?12 "
    "WHERE memory_id=?2";
constexpr char kDeleteCurrent[] = "DELETE FROM memories WHERE memory_id=?";
constexpr char kCurrentDoc[] = "SELECT doc_id FROM memories WHERE memory_id=?";
// Rows kept before a flush inside one transaction (a rebuild's replay).
constexpr size_t kMaxPendingRows = 4096;
constexpr char kForget[] =
    "INSERT OR REPLACE INTO memory_forgotten(memory_id,event_id,mode,ts) VALUES(?,?,?,?)";
constexpr char kForgotten[] = "SELECT mode,event_id FROM memory_forgotten WHERE memory_id=?";
constexpr char kTrail[] = "SELECT event_id,session_no,ended_by FROM memory_versions "
                          "WHERE memory_id=? ORDER BY version";
constexpr char kTombstoneSession[] =
    "SELECT session_no FROM events WHERE id=(SELECT event_id FROM memory_forgotten "
    "WHERE memory_id=?)";

// A memory row as memory.schema.json, from the columns of kRowColumns.
#define CTXDB_MEMORY_COLUMNS                                                                       \
  "v.memory_id,v.version,v.scope,v.scope_id,v.kind,v.content,v.source_refs,v.keywords,"            \
  "v.readers,v.confidence,v.priority,v.sensitive,v.expires_at,v.update_policy,v.valid_from,"       \
  "v.valid_to,v.ended_by,v.event_id,c.session_id,f.mode,u.use_count,u.last_used "                  \
  "FROM memory_versions v JOIN chains c ON c.session_no=v.session_no "                             \
  "LEFT JOIN memory_forgotten f ON f.memory_id=v.memory_id "                                       \
  "LEFT JOIN memory_usage u ON u.memory_id=v.memory_id "
constexpr char kGet[] =
    "SELECT " CTXDB_MEMORY_COLUMNS "WHERE v.memory_id=? ORDER BY v.version DESC LIMIT 1";
// ?1 scope, ?2 scope_id, ?3 kind (NULL: any), ?4 all versions, ?5 as_of
// (NULL: now's view), ?6 limit.
constexpr char kList[] =
    "SELECT " CTXDB_MEMORY_COLUMNS
    "WHERE (?1 IS NULL OR v.scope=?1) AND (?2 IS NULL OR v.scope_id=?2) "
    "AND (?3 IS NULL OR v.kind=?3) "
    "AND (CASE WHEN ?5 IS NOT NULL THEN v.valid_from<=?5 AND (v.valid_to IS NULL OR v.valid_to>?5) "
    "     WHEN ?4 THEN 1 ELSE v.valid_to IS NULL END) "
    "ORDER BY v.memory_id,v.version LIMIT ?6";

[[noreturn]] void reject(const log::Event &e, const std::string &rule) {
  throw Error(Code::kInvalidArg, e.type + " '" + e.id + "': " + rule);
}

std::optional<std::string> opt_text(const SQLite::Column &c) {
  if (c.isNull()) return std::nullopt;
  return c.getString();
}

std::optional<int64_t> opt_int(const SQLite::Column &c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

void bind_opt(SQLite::Statement &q, int i, const std::optional<std::string> &v) {
  if (v)
    store::bind_text(q, i, *v);
  else
    q.bind(i);
}

void bind_opt(SQLite::Statement &q, int i, const std::optional<int64_t> &v) {
  if (v)
    q.bind(i, *v);
  else
    q.bind(i);
}

// The keywords (a JSON array of strings) as one text to index.
std::string keyword_text(std::string_view keywords_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = json::parse(parser, keywords_json, "keywords");
  std::string out;
  for (simdjson::dom::element k : doc.get_array()) {
    if (!out.empty()) out += ' ';
    out += std::string_view(k.get_string().value());
  }
  return index_text(out);
}

bool has(simdjson::dom::element p, const char *key) {
  simdjson::dom::element v;
  return !p[key].get(v);
}

} // namespace

struct Memories::Version {
  int64_t version = 0;
  std::string scope, scope_id, kind = "fact";
  std::optional<std::string> content;
  std::string source_refs = "[]", keywords = "[]";
  std::optional<std::string> readers;
  double confidence = 1.0;
  int64_t priority = 50;
  bool sensitive = false;
  std::optional<int64_t> expires_at;
  std::optional<std::string> update_policy;
  bool ended = false;
  int64_t valid_from = 0; // as stored (a version being written starts at its event's ts)
};

namespace {

// Sets the fields the payload gives; what it leaves out carries over.
template <class Version> void apply(Version &v, const log::Event &e, simdjson::dom::element p) {
  std::string_view s;
  if (!p["kind"].get(s)) v.kind = s;
  if (!p["content"].get(s)) v.content = std::string(s);
  simdjson::dom::element x;
  if (!p["source_refs"].get(x)) v.source_refs = json::canonical(x);
  if (!p["keywords"].get(x)) v.keywords = json::canonical(x);
  if (!p["readers"].get(x)) v.readers = json::canonical(x);
  double d;
  if (!p["confidence"].get(d)) v.confidence = d;
  int64_t n;
  if (!p["priority"].get(n)) v.priority = n;
  bool b;
  if (!p["sensitive"].get(b)) v.sensitive = b;
  // An expiry given replaces the whole expiry rule of the version before.
  if (has(p, "expires_at") || has(p, "ttl_ms") || has(p, "update_policy")) {
    if (has(p, "expires_at") && has(p, "ttl_ms"))
      reject(e, "expires_at and ttl_ms: give one, not both");
    v.expires_at.reset();
    v.update_policy.reset();
    if (!p["expires_at"].get(n)) {
      if (n <= e.ts)
        reject(e, "expires_at: " + std::to_string(n) + " is not after the event's ts (" +
                      std::to_string(e.ts) + "): the memory would be expired when written");
      v.expires_at = n;
    }
    if (!p["ttl_ms"].get(n)) {
      int64_t at = 0;
      if (__builtin_add_overflow(e.ts, n, &at))
        reject(e, "ttl_ms: " + std::to_string(n) + " after the event's ts (" +
                      std::to_string(e.ts) + ") is past the latest time ctxdb stores");
      v.expires_at = at;
    }
    if (!p["update_policy"].get(s)) v.update_policy = std::string(s);
  }
  // An expiry carried over from the version before may have passed.
  if (v.expires_at && *v.expires_at <= e.ts)
    reject(e, "expires_at: the version would be expired when written (it expires at " +
                  std::to_string(*v.expires_at) + ", the event's ts is " + std::to_string(e.ts) +
                  "); give a new expires_at, ttl_ms or update_policy");
  if (v.source_refs == "[]")
    reject(e, "source_refs: at least one event, message or artifact id is required (invariant 10)");
  if (v.scope != "session" && !v.expires_at && !v.update_policy)
    reject(e, "expires_at, ttl_ms or update_policy: a '" + v.scope +
                  "' memory needs an expiry or an update policy (invariant 11)");
}

std::string scope_key(const std::string &scope, const std::string &scope_id) {
  return scope + '\x1f' + scope_id;
}

void write_memory(json::JsonWriter &w, SQLite::Statement &q) {
  auto text_or_null = [&](const char *key, int col) {
    w.key(key);
    if (q.getColumn(col).isNull())
      w.null();
    else
      w.value(q.getColumn(col).getString());
  };
  auto raw_or_null = [&](const char *key, int col) {
    w.key(key);
    if (q.getColumn(col).isNull())
      w.null();
    else
      w.raw(q.getColumn(col).getString());
  };
  auto int_or_null = [&](const char *key, int col) {
    w.key(key);
    if (q.getColumn(col).isNull())
      w.null();
    else
      w.value(q.getColumn(col).getInt64());
  };
  bool ended = !q.getColumn(15).isNull();
  bool forgotten = !q.getColumn(19).isNull();
  w.begin_object()
      .field("memory_id", q.getColumn(0).getString())
      .field("version", q.getColumn(1).getInt64())
      .field("scope", q.getColumn(2).getString())
      .field("scope_id", q.getColumn(3).getString())
      .field("kind", q.getColumn(4).getString());
  text_or_null("content", 5);
  w.raw_field("source_refs", q.getColumn(6).getString())
      .raw_field("keywords", q.getColumn(7).getString());
  raw_or_null("readers", 8);
  w.key("confidence");
  write_number(w, q.getColumn(9).getDouble());
  w.field("priority", q.getColumn(10).getInt64())
      .key("sensitive")
      .boolean(q.getColumn(11).getInt() != 0);
  int_or_null("expires_at", 12);
  text_or_null("update_policy", 13);
  w.field("valid_from", q.getColumn(14).getInt64());
  int_or_null("valid_to", 15);
  text_or_null("ended_by", 16);
  w.field("event_id", q.getColumn(17).getString())
      .field("session_id", q.getColumn(18).getString())
      .field("status", !ended                                 ? "current"
                       : forgotten && q.getColumn(5).isNull() ? "forgotten"
                                                              : "superseded")
      .field("use_count", q.getColumn(20).isNull() ? int64_t{0} : q.getColumn(20).getInt64());
  int_or_null("last_used", 21);
  w.end_object();
}

} // namespace

std::span<const char *const> Memories::tables() const {
  static const char *const kTables[] = {"memory_versions", "memories", "memory_forgotten",
                                        "memory_rank"};
  return kTables;
}

void Memories::on_append(const log::Event &e) {
  if (!e.type.starts_with("Memory")) return;
  bool written = e.type == "MemoryWritten", updated = e.type == "MemoryUpdated",
       deleted = e.type == "MemoryDeleted";
  if (!written && !updated && !deleted) return;
  simdjson::dom::element p = payloads_.get(e);
  // A purged payload: the purge that removed it ends the memory (see the
  // header), so there is nothing to replay.
  if (p.is_null()) return;
  if (written)
    write(e, p);
  else if (updated)
    update(e, p);
  else
    remove(e, p);
}

std::optional<Memories::Version> Memories::current(const std::string &memory_id) {
  auto q = store_.statement(kLastVersion);
  store::bind_text(*q, 1, memory_id);
  if (!q->executeStep()) return std::nullopt;
  Version v;
  v.version = q->getColumn(0).getInt64();
  v.scope = q->getColumn(1).getString();
  v.scope_id = q->getColumn(2).getString();
  v.kind = q->getColumn(3).getString();
  v.content = opt_text(q->getColumn(4));
  v.source_refs = q->getColumn(5).getString();
  v.keywords = q->getColumn(6).getString();
  v.readers = opt_text(q->getColumn(7));
  v.confidence = q->getColumn(8).getDouble();
  v.priority = q->getColumn(9).getInt64();
  v.sensitive = q->getColumn(10).getInt() != 0;
  v.expires_at = opt_int(q->getColumn(11));
  v.update_policy = opt_text(q->getColumn(12));
  v.ended = !q->getColumn(13).isNull();
  v.valid_from = q->getColumn(14).getInt64();
  return v;
}

void Memories::insert_version(const log::Event &e, const std::string &memory_id, const Version &v) {
  auto q = store_.statement(kInsertVersion);
  store::bind_text(*q, 1, memory_id);
  q->bind(2, v.version);
  q->bind(3, e.session_no);
  q->bind(4, e.seq);
  store::bind_text(*q, 5, e.id);
  store::bind_text(*q, 6, v.scope);
  store::bind_text(*q, 7, v.scope_id);
  store::bind_text(*q, 8, v.kind);
  bind_opt(*q, 9, v.content);
  store::bind_text(*q, 10, v.source_refs);
  store::bind_text(*q, 11, v.keywords);
  bind_opt(*q, 12, v.readers);
  q->bind(13, v.confidence);
  q->bind(14, v.priority);
  q->bind(15, int(v.sensitive));
  bind_opt(*q, 16, v.expires_at);
  bind_opt(*q, 17, v.update_policy);
  q->bind(18, e.ts);
  q->exec();
}

// The memory's row in memories: its doc_id (its row in memory_fts) is the
// pos of its MemoryWritten inside its scope's range (scope_rows.hpp), a
// function of the log that a replay skipping purged memories still gives
// every other memory. A memory's scope never changes, nor its doc_id.
// Kept in rows_ until flush().
void Memories::write_current(const log::Event &e, const std::string &memory_id, const Version &v,
                             bool insert) {
  std::string key = scope_key(v.scope, v.scope_id);
  Row &r = insert ? (rows_[memory_id] = Row()) : row(memory_id);
  if (insert) r.doc_id = scope_first_row(key) + e.pos;
  r.live = true;
  r.version = v.version;
  r.scope_key = std::move(key);
  r.sensitive = v.sensitive;
  r.readers = v.readers;
  r.confidence = v.confidence;
  r.priority = v.priority;
  r.expires_at = v.expires_at;
  r.valid_from = e.ts;
  r.search_content = index_text(v.content.value_or(""));
  r.search_keywords = keyword_text(v.keywords);
  if (rows_.size() >= kMaxPendingRows) flush();
}

Memories::Row &Memories::row(const std::string &memory_id) {
  auto [it, fresh] = rows_.try_emplace(memory_id);
  if (fresh) {
    auto q = store_.statement(kCurrentDoc);
    store::bind_text(*q, 1, memory_id);
    if (q->executeStep()) {
      it->second.doc_id = q->getColumn(0).getInt64();
      it->second.existed = it->second.live = true;
    }
  }
  return it->second;
}

void Memories::drop_current(const std::string &memory_id) { row(memory_id).live = false; }

// Updates and deletes row by row; new rows through memories_pending in one
// statement, in doc_id order (why: Memories::Row).
void Memories::flush() {
  if (rows_.empty()) return;
  std::vector<std::pair<int64_t, const std::string *>> order;
  order.reserve(rows_.size());
  for (const auto &[id, r] : rows_) order.emplace_back(r.doc_id, &id);
  std::sort(order.begin(), order.end());
  // One new row (a single append) goes straight in: one statement either way.
  size_t fresh = size_t(std::count_if(rows_.begin(), rows_.end(), [](const auto &kv) {
    return kv.second.live && !kv.second.existed;
  }));
  bool inserted = false;
  for (const auto &[doc_id, id] : order) {
    const Row &r = rows_.at(*id);
    if (!r.live) {
      if (!r.existed) continue;
      auto q = store_.statement(kDeleteCurrent);
      store::bind_text(*q, 1, *id);
      q->exec();
      continue;
    }
    bool staged = !r.existed && fresh > 1;
    // Every time: a rolled back transaction takes the table with it.
    if (staged && !inserted) store_.statement(kCreatePending)->exec();
    auto q = store_.statement(r.existed ? kUpdateCurrent
                              : staged  ? kInsertPending
                                        : kInsertCurrent);
    if (!r.existed) q->bind(1, doc_id);
    inserted |= staged;
    store::bind_text(*q, 2, *id);
    q->bind(3, r.version);
    store::bind_text(*q, 4, r.scope_key);
    q->bind(5, int(r.sensitive));
    bind_opt(*q, 6, r.readers);
    q->bind(7, r.confidence);
    q->bind(8, r.priority);
    bind_opt(*q, 9, r.expires_at);
    q->bind(10, r.valid_from);
    store::bind_text(*q, 11, r.search_content);
    store::bind_text(*q, 12, r.search_keywords);
    q->exec();
  }
  rows_.clear();
  if (!inserted) return;
  store_.statement(kInsertFromPending)->exec();
  store_.statement(kClearPending)->exec();
}

void Memories::discard() { rows_.clear(); }

// An event that ends a version (an update, a deletion) must not come
// before it began: the log does not order ts, and a version that ends
// before it begins answers no "as of" at all.
void Memories::check_not_before(const log::Event &e, const Version &v) {
  if (e.ts < v.valid_from)
    reject(e, "ts: " + std::to_string(e.ts) + " is before version " + std::to_string(v.version) +
                  " began (" + std::to_string(v.valid_from) +
                  "): a version cannot end before it begins");
}

void Memories::not_live(const log::Event &e, const std::string &memory_id) {
  auto q = store_.statement(kForgotten);
  store::bind_text(*q, 1, memory_id);
  if (q->executeStep())
    throw Error(Code::kConflict, e.type + " '" + e.id + "': memory '" + memory_id +
                                     "' was forgotten (" + q->getColumn(0).getString() +
                                     ") by event '" + q->getColumn(1).getString() + "'");
  throw Error(Code::kNotFound,
              e.type + " '" + e.id + "': memory '" + memory_id + "' does not exist");
}

void Memories::write(const log::Event &e, simdjson::dom::element p) {
  std::string memory_id(string_field(p, "memory_id"));
  if (current(memory_id))
    throw Error(Code::kConflict, "MemoryWritten '" + e.id + "': memory '" + memory_id +
                                     "' already exists (a new version is a MemoryUpdated)");
  {
    auto q = store_.statement(kForgotten);
    store::bind_text(*q, 1, memory_id);
    if (q->executeStep())
      throw Error(Code::kConflict, "MemoryWritten '" + e.id + "': memory id '" + memory_id +
                                       "' was used by a memory forgotten by event '" +
                                       q->getColumn(1).getString() + "'");
  }
  Version v;
  v.version = 1;
  v.scope = std::string(string_field(p, "scope"));
  v.scope_id = std::string(string_field(p, "scope_id"));
  if (v.scope == "session" && v.scope_id.empty()) v.scope_id = e.session_id;
  if (v.scope == "global" && !v.scope_id.empty())
    reject(e, "scope_id: a global memory has none (got '" + v.scope_id + "')");
  if (v.scope != "global" && v.scope_id.empty())
    reject(e, "scope_id: required for a '" + v.scope + "' memory");
  apply(v, e, p);
  insert_version(e, memory_id, v);
  write_current(e, memory_id, v, true);
}

void Memories::update(const log::Event &e, simdjson::dom::element p) {
  std::string memory_id(string_field(p, "memory_id"));
  std::optional<Version> v = current(memory_id);
  if (!v || v->ended) not_live(e, memory_id);
  std::string_view s;
  if (!p["scope"].get(s) && s != v->scope)
    reject(e, "scope: a memory's scope never changes (it is '" + v->scope + "')");
  if (!p["scope_id"].get(s) && s != v->scope_id)
    reject(e, "scope_id: a memory's scope id never changes (it is '" + v->scope_id + "')");
  check_not_before(e, *v);
  int64_t old = v->version;
  v->source_refs = "[]"; // a new version brings its own evidence
  apply(*v, e, p);
  v->version = old + 1;
  auto q = store_.statement(kEndVersion);
  q->bind(1, e.ts);
  store::bind_text(*q, 2, e.id);
  store::bind_text(*q, 3, memory_id);
  q->bind(4, old);
  q->exec();
  insert_version(e, memory_id, *v);
  write_current(e, memory_id, *v, false);
}

void Memories::remove(const log::Event &e, simdjson::dom::element p) {
  std::string memory_id(string_field(p, "memory_id"));
  std::string mode(string_field(p, "mode"));
  if (mode.empty()) mode = "tombstone";
  std::optional<Version> v = current(memory_id);
  if (mode == "purge") {
    simdjson::dom::array listed;
    if (p["purged_event_ids"].get(listed) || listed.size() == 0)
      reject(e, "purged_event_ids: a purge lists the events whose payloads it removes");
    // A memory with events in several sessions is purged by one purge per
    // chain (memory/purger.hpp): the first ended it, the others only
    // remove their chain's payloads.
    if (!v && forgotten_mode(memory_id) == "purge") return;
    // Without rows the memory's events were purged already: this is a
    // replay (or an import) of the purge. Otherwise the list must be the
    // memory's whole trail, so no payload that names it is left.
    if (v) {
      std::optional<Trail> t = trail(memory_id);
      std::vector<std::string> given;
      for (simdjson::dom::element id : listed) given.emplace_back(id.get_string().value());
      if (given != t->event_ids) {
        std::string want;
        for (const std::string &id : t->event_ids) want += (want.empty() ? "" : ", ") + id;
        reject(e, "purged_event_ids: must list the memory's events in order: " + want);
      }
    }
    auto q = store_.statement(kDeleteVersions);
    store::bind_text(*q, 1, memory_id);
    q->exec();
    // Now, not at commit: the purger's merge, which drops the terms from
    // the file, runs first among the observers' flushes.
    drop_current(memory_id);
    flush();
  } else {
    if (!v || v->ended) not_live(e, memory_id);
    check_not_before(e, *v);
    auto end = store_.statement(kEndVersion);
    end->bind(1, e.ts);
    store::bind_text(*end, 2, e.id);
    store::bind_text(*end, 3, memory_id);
    end->bind(4, v->version);
    end->exec();
    auto q = store_.statement(kClearContent);
    store::bind_text(*q, 1, memory_id);
    q->exec();
    drop_current(memory_id);
  }
  auto q = store_.statement(kForget);
  store::bind_text(*q, 1, memory_id);
  store::bind_text(*q, 2, e.id);
  store::bind_text(*q, 3, mode);
  q->bind(4, e.ts);
  q->exec();
}

std::string Memories::forgotten_mode(const std::string &memory_id) {
  auto q = store_.statement(kForgotten);
  store::bind_text(*q, 1, memory_id);
  return q->executeStep() ? q->getColumn(0).getString() : std::string();
}

std::optional<Trail> Memories::trail(std::string_view memory_id) {
  Trail t;
  auto q = store_.statement(kTrail);
  store::bind_text(*q, 1, memory_id);
  while (q->executeStep()) {
    t.event_ids.push_back(q->getColumn(0).getString());
    t.last_session_no = q->getColumn(1).getInt64();
  }
  auto f = store_.statement(kForgotten);
  store::bind_text(*f, 1, memory_id);
  if (f->executeStep()) {
    t.forgotten_mode = f->getColumn(0).getString();
    if (t.forgotten_mode == "tombstone") {
      t.event_ids.push_back(f->getColumn(1).getString());
      auto s = store_.statement(kTombstoneSession);
      store::bind_text(*s, 1, memory_id);
      if (s->executeStep()) t.last_session_no = s->getColumn(0).getInt64();
    }
  }
  if (t.event_ids.empty() && t.forgotten_mode.empty()) return std::nullopt;
  return t;
}

std::string Memories::get_json(std::string_view memory_id) {
  auto q = store_.statement(kGet);
  store::bind_text(*q, 1, memory_id);
  if (q->executeStep()) {
    json::JsonWriter w;
    write_memory(w, *q);
    return w.take();
  }
  auto f = store_.statement(kForgotten);
  store::bind_text(*f, 1, memory_id);
  if (f->executeStep())
    throw Error(Code::kNotFound, "memory '" + std::string(memory_id) + "' was purged by event '" +
                                     f->getColumn(1).getString() + "'");
  throw Error(Code::kNotFound, "memory '" + std::string(memory_id) + "' not found");
}

std::string Memories::list_json(const ListQuery &lq) {
  auto q = store_.statement(kList);
  bind_opt(*q, 1, lq.scope);
  bind_opt(*q, 2, lq.scope_id);
  bind_opt(*q, 3, lq.kind);
  q->bind(4, int(lq.all_versions));
  bind_opt(*q, 5, lq.as_of);
  q->bind(6, lq.limit);
  json::JsonWriter w;
  w.begin_array();
  while (q->executeStep()) write_memory(w, *q);
  w.end_array();
  return w.take();
}

} // namespace ctxdb::memory
