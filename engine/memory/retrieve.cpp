#include "memory/retrieve.hpp"

#include "error.hpp"
#include "memory/bm25.hpp"
#include "memory/number.hpp"
#include "memory/scope_rows.hpp"
#include "memory/search_text.hpp"
#include "util/ids.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <sqlite3.h>

namespace ctxdb::memory {

namespace {

#define CTXDB_RETRIEVE_FILTERS(m)                                                                  \
  m ".valid_from<=?3 AND (" m ".expires_at IS NULL OR " m ".expires_at>?3) "                       \
    "AND (" m ".sensitive=0 OR ?4) "                                                               \
    "AND (" m ".readers IS NULL OR EXISTS (SELECT 1 FROM json_each(" m                             \
    ".readers) WHERE value=?5)) "
// One scope's matches that pass the filters, with their bm25 (keywords
// weigh twice) and what the blend needs: FTS5 reads and scores only the
// rows of the scope's range (scope_rows.hpp), and each match's memory_rank
// row (schema 12) gives its length for bm25, its scope (two scopes may
// share a range) and the columns the filters and the blend read, so no
// memory is read until it is taken. Not ORDER BY rank: FTS5 then runs the
// query twice (once to sort, once to hand the rows over), which costs
// twice the scoring; sorting the scores here costs far less. ctxdb_bm25 is
// bm25() with the table's statistics (?6) counted by the first scope's
// query only, and each row's length from the joined record (bm25.hpp):
// FTS5 would look it up with a statement of its own per row, where the
// join seeks forward on a cursor it keeps open. CROSS JOIN keeps
// memory_fts the outer loop.
//
// The direction: FTS5 3.40.1 reaches a rowid range by stepping through
// every entry of a term's doclist before it (a doclist that spans few
// pages has no index to seek with), so a range in the upper half of the
// rowid space is read from its end, backwards. The matches are sorted
// below, so the order they come in changes nothing.
#define CTXDB_SCOPE_MATCHES                                                                        \
  "SELECT memory_fts.rowid,ctxdb_bm25(memory_fts,?6,r.sz,1.0,2.0),r.memory_id,r.version,"          \
  "r.priority,r.confidence,r.valid_from,r.expires_at,r.sensitive FROM memory_fts CROSS JOIN "      \
  "memory_rank r ON r.doc_id=memory_fts.rowid WHERE memory_fts MATCH ?1 "                          \
  "AND memory_fts.rowid BETWEEN ?7 AND ?8 AND r.scope_key=?2 AND " CTXDB_RETRIEVE_FILTERS("r")
constexpr char kScopeMatches[] = CTXDB_SCOPE_MATCHES "ORDER BY memory_fts.rowid";
constexpr char kScopeMatchesBackwards[] = CTXDB_SCOPE_MATCHES "ORDER BY memory_fts.rowid DESC";
#undef CTXDB_SCOPE_MATCHES
constexpr char kBrowse[] =
    "SELECT m.memory_id,m.version,0.0,m.priority,m.confidence,m.valid_from,m.expires_at,"
    "m.sensitive FROM memories m "
    "WHERE ?1 IS NULL AND m.scope_key IN (SELECT value FROM json_each(?2)) "
    "AND " CTXDB_RETRIEVE_FILTERS(
        "m") "ORDER BY m.priority DESC,m.valid_from DESC,m.memory_id LIMIT ?6";
// The rest of a taken candidate's version (its memory_rank row was read already).
constexpr char kDetails[] = "SELECT v.scope,v.scope_id,v.kind,v.content,v.source_refs,v.event_id "
                            "FROM memory_versions v WHERE v.memory_id=? AND v.version=?";
constexpr char kUse[] = "INSERT INTO memory_usage(memory_id,use_count,last_used) VALUES(?,1,?) "
                        "ON CONFLICT(memory_id) DO UPDATE SET use_count=use_count+1,"
                        "last_used=max(last_used,excluded.last_used)";

constexpr char kChanges[] = "SELECT changes FROM memory_changes WHERE id=1";

constexpr double kDayMs = 86400000.0;
constexpr double kHalfLifeDays = 30;
constexpr double kWeightText = 0.55, kWeightPriority = 0.15, kWeightConfidence = 0.15,
                 kWeightRecency = 0.15;

struct Candidate {
  std::string memory_id;
  int64_t version = 0;
  int64_t doc_id = 0;         // a match's row in memory_fts
  double bm25 = 0;            // a match's text score, before the blend
  int64_t priority_value = 0; // 0..100 as written
  double score = 0, text = 0, priority = 0, confidence = 0, recency = 0;
  int64_t valid_from = 0;
  std::optional<int64_t> expires_at;
  bool sensitive = false;
};

// expires_at and sensitive, columns i and i + 1 of a memories row.
void read_expiry(SQLite::Statement &s, int i, Candidate &c) {
  if (!s.getColumn(i).isNull()) c.expires_at = s.getColumn(i).getInt64();
  c.sensitive = s.getColumn(i + 1).getInt() != 0;
}

std::string scope_key(const ScopeRef &s) { return s.scope + '\x1f' + s.id; }

std::string scope_keys(const std::vector<ScopeRef> &scopes) {
  json::JsonWriter w;
  w.begin_array();
  for (const ScopeRef &s : scopes) w.value(scope_key(s));
  w.end_array();
  return w.take();
}

// The text part of the blend from a bm25 score (<= 0, lower is better).
double text_score(double bm25) {
  double t = -bm25;
  return t > 0 ? t / (1 + t) : 0;
}

// The blend of a candidate whose text part is set.
void blend(Candidate &c, const Query &q, int64_t priority) {
  c.priority = std::clamp(double(priority) / 100.0, 0.0, 1.0);
  double age_days = std::max<double>(0, double(q.now - c.valid_from)) / kDayMs;
  c.recency = std::pow(0.5, age_days / kHalfLifeDays);
  c.score = kWeightText * c.text + kWeightPriority * c.priority + kWeightConfidence * c.confidence +
            kWeightRecency * c.recency;
}

// The highest blend a match of this bm25 can reach (every other part at
// 1), summed as blend() sums, so no candidate's score exceeds it.
double best_blend(double bm25) {
  return kWeightText * text_score(bm25) + kWeightPriority * 1.0 + kWeightConfidence * 1.0 +
         kWeightRecency * 1.0;
}

bool better(const Candidate &a, const Candidate &b) {
  return a.score != b.score ? a.score > b.score : a.memory_id < b.memory_id;
}

void bind_filters(SQLite::Statement &s, const Query &q) {
  s.bind(3, q.now);
  s.bind(4, int(q.allow_sensitive));
  if (q.agent) store::bind_text(s, 5, *q.agent);
}

// Browsing (a query without words): the best by priority, then recency.
std::vector<Candidate> browse(store::Store &store, const Query &q, const std::string &keys) {
  auto s = store.statement(kBrowse);
  store::bind_text(*s, 2, keys);
  bind_filters(*s, q);
  s->bind(6, std::max(kCandidates, 4 * q.limit));
  std::vector<Candidate> out;
  while (s->executeStep()) {
    Candidate c;
    c.memory_id = s->getColumn(0).getString();
    c.version = s->getColumn(1).getInt64();
    c.confidence = s->getColumn(4).getDouble();
    c.valid_from = s->getColumn(5).getInt64();
    read_expiry(*s, 6, c);
    blend(c, q, s->getColumn(3).getInt64());
    out.push_back(std::move(c));
  }
  return out;
}

// memory_changes' count in the connection's snapshot, under which it
// keeps bm25's statistics (bm25.hpp); none inside a write transaction,
// whose count may yet be rolled back, or without the count's row.
std::optional<int64_t> memory_changes(store::Store &store) {
  auto q = store.statement(kChanges);
  if (!q->executeStep()) return std::nullopt;
  int64_t changes = q->getColumn(0).getInt64();
  // After the read: a deferred transaction takes its snapshot there.
  if (sqlite3_txn_state(store.db().getHandle(), "main") != SQLITE_TXN_READ) return std::nullopt;
  return changes;
}

// The matches of a MATCH expression in the requested scopes that pass the
// filters, best bm25 first across them: one FTS5 query per scope over its
// rowid range. `phrases`: the expression's phrases in order, the keys of
// their statistics on the connection (bm25.hpp), or empty to key them by
// the expression. SQLite errors (an invalid FTS5 expression) propagate
// from the constructor.
class Matches {
public:
  Matches(store::Store &store, const Query &q, const std::string &match,
          std::vector<std::string> phrases = {})
      : q_(q) {
    stats_.keys = std::move(phrases);
    if (stats_.keys.empty()) stats_.expression = match;
    stats_.changes = memory_changes(store);
    std::vector<std::string> keys;
    for (const ScopeRef &s : q.scopes)
      if (std::string k = scope_key(s); std::find(keys.begin(), keys.end(), k) == keys.end())
        keys.push_back(std::move(k));
    read_scopes(store, match, keys);
    // Sorted by reference: a Candidate is too large to move around.
    order_.resize(rows_.size());
    for (size_t i = 0; i < rows_.size(); ++i) order_[i] = {rows_[i].bm25, rows_[i].doc_id, i};
    std::sort(order_.begin(), order_.end(), [](const Ref &a, const Ref &b) {
      return a.bm25 != b.bm25 ? a.bm25 < b.bm25 : a.doc_id < b.doc_id;
    });
  }

  // The bm25 of the next match, or nullopt when none is left.
  std::optional<double> peek() const {
    return next_ < order_.size() ? std::optional<double>(order_[next_].bm25) : std::nullopt;
  }

  // Doclists walked for bm25's statistics (0: all kept from before).
  int64_t phrases_counted() const { return stats_.walked; }

  // Takes the next match, blended.
  Candidate next() {
    Candidate c = std::move(rows_[order_[next_++].row]);
    c.text = text_score(c.bm25);
    blend(c, q_, c.priority_value);
    return c;
  }

private:
  // Runs kScopeMatches for every scope (bound through the C API: SQLiteCpp
  // cannot bind a pointer).
  void read_scopes(store::Store &store, const std::string &match,
                   const std::vector<std::string> &keys) {
    sqlite3 *db = store.db().getHandle();
    for (const std::string &key : keys) {
      int64_t first = scope_first_row(key);
      bool back = first > std::numeric_limits<int64_t>::max() / 2;
      store::Store::RawStmt st = store.raw_statement(back ? kScopeMatchesBackwards : kScopeMatches);
      sqlite3_stmt *s = st.get();
      sqlite3_bind_text(s, 1, match.data(), int(match.size()), SQLITE_STATIC);
      sqlite3_bind_text(s, 2, key.data(), int(key.size()), SQLITE_STATIC);
      sqlite3_bind_int64(s, 3, q_.now);
      sqlite3_bind_int(s, 4, int(q_.allow_sensitive));
      if (q_.agent) sqlite3_bind_text(s, 5, q_.agent->data(), int(q_.agent->size()), SQLITE_STATIC);
      sqlite3_bind_pointer(s, 6, &stats_, kBm25StatsType, nullptr);
      sqlite3_bind_int64(s, 7, first);
      sqlite3_bind_int64(s, 8, scope_last_row(key));
      int rc;
      while ((rc = sqlite3_step(s)) == SQLITE_ROW) rows_.push_back(read_row(s));
      if (rc != SQLITE_DONE) throw SQLite::Exception(db, rc);
    }
  }

  static Candidate read_row(sqlite3_stmt *s) {
    Candidate c;
    c.doc_id = sqlite3_column_int64(s, 0);
    c.bm25 = sqlite3_column_double(s, 1);
    c.memory_id.assign(reinterpret_cast<const char *>(sqlite3_column_text(s, 2)),
                       size_t(sqlite3_column_bytes(s, 2)));
    c.version = sqlite3_column_int64(s, 3);
    c.priority_value = sqlite3_column_int64(s, 4);
    c.confidence = sqlite3_column_double(s, 5);
    c.valid_from = sqlite3_column_int64(s, 6);
    if (sqlite3_column_type(s, 7) != SQLITE_NULL) c.expires_at = sqlite3_column_int64(s, 7);
    c.sensitive = sqlite3_column_int(s, 8) != 0;
    return c;
  }

  struct Ref {
    double bm25;
    int64_t doc_id;
    size_t row; // in rows_
  };

  const Query &q_;
  Bm25Stats stats_; // shared by the scopes' queries
  std::vector<Candidate> rows_;
  std::vector<Ref> order_; // rows_ best bm25 first
  size_t next_ = 0;
};

std::vector<std::string> string_array(simdjson::dom::parser &parser, std::string_view json_text) {
  simdjson::dom::element doc = json::parse(parser, json_text, "source_refs");
  std::vector<std::string> out;
  for (simdjson::dom::element e : doc.get_array()) out.emplace_back(e.get_string().value());
  return out;
}

// Adds a candidate to the retrieval unless it does not fit the budget;
// false when its row is gone.
bool take(store::Store &store, const Query &q, const token::Counter &counter,
          simdjson::dom::parser &parser, const Candidate &c, Retrieval &r) {
  auto d = store.statement(kDetails);
  store::bind_text(*d, 1, c.memory_id);
  d->bind(2, c.version);
  if (!d->executeStep()) return false;
  Retrieved m;
  m.content = d->getColumn(3).getString();
  m.tokens = counter.count(m.content);
  m.memory_id = c.memory_id;
  m.version = c.version;
  m.scope = d->getColumn(0).getString();
  m.scope_id = d->getColumn(1).getString();
  m.kind = d->getColumn(2).getString();
  m.source_refs = string_array(parser, d->getColumn(4).getString());
  m.event_id = d->getColumn(5).getString();
  m.expires_at = c.expires_at;
  m.sensitive = c.sensitive;
  m.score = c.score;
  m.text = c.text;
  m.priority = c.priority;
  m.confidence = c.confidence;
  m.recency = c.recency;
  m.valid_from = c.valid_from;
  int64_t cost = q.cost ? q.cost(m) : m.tokens;
  if (q.budget && r.used_tokens + cost > *q.budget) {
    r.excluded.push_back({c.memory_id, cost, c.score, "budget"});
    return true;
  }
  r.used_tokens += cost;
  r.included.push_back(std::move(m));
  return true;
}

// Takes candidates best blend first until `limit` are included. Matches
// are read (best bm25 first, at most kCandidates passing the filters) only
// while one still unread could outrank the best one read: the same
// memories, in the same order, as blending all kCandidates and sorting.
void rank(store::Store &store, const Query &q, const token::Counter &counter, Matches *matches,
          std::vector<Candidate> pool, Retrieval &r) {
  // A heap of indexes into `pool`: a Candidate is too large to move around.
  auto worse = [&pool](size_t a, size_t b) { return better(pool[b], pool[a]); };
  std::vector<size_t> heap(pool.size());
  for (size_t i = 0; i < heap.size(); ++i) heap[i] = i;
  std::make_heap(heap.begin(), heap.end(), worse);
  int64_t cap = std::max(kCandidates, 4 * q.limit), read = 0;
  simdjson::dom::parser parser; // one for every source_refs: it allocates on first use
  while (int64_t(r.included.size()) < q.limit) {
    while (matches && read < cap) {
      std::optional<double> next = matches->peek();
      if (!next || (!heap.empty() && pool[heap.front()].score > best_blend(*next))) break;
      pool.push_back(matches->next());
      heap.push_back(pool.size() - 1);
      std::push_heap(heap.begin(), heap.end(), worse);
      ++read;
    }
    if (heap.empty()) break;
    std::pop_heap(heap.begin(), heap.end(), worse);
    take(store, q, counter, parser, pool[heap.back()], r);
    heap.pop_back();
  }
}

} // namespace

Retrieval retrieve(store::Store &store, const Query &q, const token::Counter &counter) {
  // One snapshot for every read below, unless the caller holds one: in
  // autocommit mode each of the few hundred row lookups would be a read
  // transaction of its own (a file lock taken and dropped, the WAL index
  // read again), which costs more than the lookup.
  std::optional<store::Store::ReadTransaction> snapshot;
  if (sqlite3_get_autocommit(store.db().getHandle())) snapshot.emplace(store);
  Retrieval r;
  std::optional<Matches> matches;
  if (q.match == Match::kFts) {
    std::string fq = fts_query(q.text);
    if (fq.find_first_not_of(" \t\r\n") != std::string::npos) {
      try {
        matches.emplace(store, q, fq);
        r.fts_query = std::move(fq);
      } catch (const SQLite::Exception &) {
        r.fell_back = true; // not FTS5 syntax: plain words, never an error
      }
    }
  }
  std::vector<Candidate> browsed;
  if (!matches) {
    std::vector<std::string> phrases = words_phrases(q.text, q.match == Match::kAll);
    r.fts_query = join_phrases(phrases, q.match == Match::kAll);
    if (r.fts_query.empty())
      browsed = browse(store, q, scope_keys(q.scopes));
    else
      matches.emplace(store, q, r.fts_query, std::move(phrases));
  }
  rank(store, q, counter, matches ? &*matches : nullptr, std::move(browsed), r);
  if (matches) r.phrases_counted = matches->phrases_counted();
  return r;
}

void record_usage(store::Store &store, const Retrieval &r, int64_t now) {
  if (r.included.empty()) return;
  store::Store::WriteTransaction tx(store);
  for (const Retrieved &m : r.included) {
    auto q = store.statement(kUse);
    store::bind_text(*q, 1, m.memory_id);
    q->bind(2, now);
    q->exec();
  }
  tx.commit();
}

Query parse_query(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = json::parse(parser, text.empty() ? "{}" : text, "memory query");
  store::embedded_schema("json/memory_query.schema.json").validate(doc, "");
  Query q;
  std::string_view s;
  if (!doc["query"].get(s)) q.text = s;
  if (!doc["match"].get(s))
    q.match = s == "all" ? Match::kAll : s == "fts" ? Match::kFts : Match::kAny;
  for (simdjson::dom::element e : doc["scopes"].get_array()) {
    ScopeRef ref{std::string(e["scope"].get_string().value()), ""};
    if (!e["id"].get(s)) ref.id = s;
    if (ref.scope != "global" && ref.id.empty())
      throw Error(Code::kInvalidArg, "scopes: a '" + ref.scope + "' scope needs an id");
    if (ref.scope == "global" && !ref.id.empty())
      throw Error(Code::kInvalidArg, "scopes: the global scope has no id");
    q.scopes.push_back(std::move(ref));
  }
  if (!doc["agent"].get(s)) q.agent = std::string(s);
  int64_t n;
  q.now = doc["now"].get(n) ? util::now_ms() : n;
  if (!doc["budget"].get(n)) q.budget = n;
  if (!doc["limit"].get(n)) q.limit = n;
  bool b;
  if (!doc["allow_sensitive"].get(b)) q.allow_sensitive = b;
  if (!doc["record_usage"].get(b)) q.record_usage = b;
  return q;
}

std::string to_json(const Retrieval &r, const Query &q, std::string_view counter_name) {
  json::JsonWriter w;
  w.begin_object().field("now", q.now).key("budget");
  q.budget ? w.value(*q.budget) : w.null();
  w.field("used_tokens", r.used_tokens)
      .field("counter", counter_name)
      .field("fts_query", r.fts_query)
      .key("fell_back")
      .boolean(r.fell_back)
      .key("memories")
      .begin_array();
  for (const Retrieved &m : r.included) {
    w.begin_object()
        .field("memory_id", m.memory_id)
        .field("version", m.version)
        .field("scope", m.scope)
        .field("scope_id", m.scope_id)
        .field("kind", m.kind)
        .field("content", m.content)
        .key("source_refs")
        .begin_array();
    for (const std::string &ref : m.source_refs) w.value(ref);
    w.end_array().field("event_id", m.event_id).field("tokens", m.tokens);
    w.key("score");
    write_number(w, m.score);
    w.key("text");
    write_number(w, m.text);
    w.key("priority");
    write_number(w, m.priority);
    w.key("confidence");
    write_number(w, m.confidence);
    w.key("recency");
    write_number(w, m.recency);
    w.field("valid_from", m.valid_from).key("expires_at");
    m.expires_at ? w.value(*m.expires_at) : w.null();
    w.key("sensitive").boolean(m.sensitive).end_object();
  }
  w.end_array().key("excluded").begin_array();
  for (const Excluded &x : r.excluded) {
    w.begin_object().field("memory_id", x.memory_id).field("tokens", x.tokens);
    w.key("score");
    write_number(w, x.score);
    w.field("reason", x.reason).end_object();
  }
  w.end_array().end_object();
  return w.take();
}

} // namespace ctxdb::memory
