#include "memory/retrieve.hpp"

#include "error.hpp"
#include "memory/number.hpp"
#include "memory/search_text.hpp"
#include "util/ids.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <cmath>

namespace ctxdb::memory {

namespace {

#define CTXDB_RETRIEVE_FILTERS                                                                     \
  "m.scope_key IN (SELECT value FROM json_each(?2)) "                                              \
  "AND m.valid_from<=?3 AND (m.expires_at IS NULL OR m.expires_at>?3) "                            \
  "AND (m.sensitive=0 OR ?4) "                                                                     \
  "AND (m.readers IS NULL OR EXISTS (SELECT 1 FROM json_each(m.readers) WHERE value=?5)) "
constexpr char kSearch[] =
    "SELECT m.memory_id,m.version,bm25(memory_fts,1.0,2.0) AS s,m.priority,m.confidence,"
    "m.valid_from FROM memory_fts JOIN memories m ON m.doc_id=memory_fts.rowid "
    "WHERE memory_fts MATCH ?1 AND " CTXDB_RETRIEVE_FILTERS "ORDER BY s LIMIT ?6";
constexpr char kBrowse[] =
    "SELECT m.memory_id,m.version,0.0,m.priority,m.confidence,m.valid_from FROM memories m "
    "WHERE ?1 IS NULL AND " CTXDB_RETRIEVE_FILTERS
    "ORDER BY m.priority DESC,m.valid_from DESC,m.memory_id LIMIT ?6";
constexpr char kDetails[] =
    "SELECT v.scope,v.scope_id,v.kind,v.content,v.source_refs,v.event_id,m.expires_at,"
    "m.sensitive FROM memory_versions v JOIN memories m ON m.memory_id=v.memory_id "
    "WHERE v.memory_id=? AND v.version=?";
constexpr char kUse[] = "INSERT INTO memory_usage(memory_id,use_count,last_used) VALUES(?,1,?) "
                        "ON CONFLICT(memory_id) DO UPDATE SET use_count=use_count+1,"
                        "last_used=max(last_used,excluded.last_used)";

constexpr double kDayMs = 86400000.0;
constexpr double kHalfLifeDays = 30;
constexpr double kWeightText = 0.55, kWeightPriority = 0.15, kWeightConfidence = 0.15,
                 kWeightRecency = 0.15;

struct Candidate {
  std::string memory_id;
  int64_t version = 0;
  double score = 0, text = 0, priority = 0, confidence = 0, recency = 0;
  int64_t valid_from = 0;
};

std::string scope_keys(const std::vector<ScopeRef> &scopes) {
  json::JsonWriter w;
  w.begin_array();
  for (const ScopeRef &s : scopes) w.value(s.scope + '\x1f' + s.id);
  w.end_array();
  return w.take();
}

// Runs one candidate query; SQLite errors (an invalid FTS5 expression)
// propagate to the caller.
std::vector<Candidate> candidates(store::Store &store, const char *sql, const Query &q,
                                  const std::string &match, const std::string &keys) {
  auto s = store.statement(sql);
  if (!match.empty()) store::bind_text(*s, 1, match);
  store::bind_text(*s, 2, keys);
  s->bind(3, q.now);
  s->bind(4, int(q.allow_sensitive));
  if (q.agent) store::bind_text(*s, 5, *q.agent);
  s->bind(6, std::max(kCandidates, 4 * q.limit));
  std::vector<Candidate> out;
  while (s->executeStep()) {
    Candidate c;
    c.memory_id = s->getColumn(0).getString();
    c.version = s->getColumn(1).getInt64();
    double t = -s->getColumn(2).getDouble();
    c.text = t > 0 ? t / (1 + t) : 0;
    c.priority = std::clamp(double(s->getColumn(3).getInt64()) / 100.0, 0.0, 1.0);
    c.confidence = s->getColumn(4).getDouble();
    c.valid_from = s->getColumn(5).getInt64();
    double age_days = std::max<double>(0, double(q.now - c.valid_from)) / kDayMs;
    c.recency = std::pow(0.5, age_days / kHalfLifeDays);
    c.score = kWeightText * c.text + kWeightPriority * c.priority +
              kWeightConfidence * c.confidence + kWeightRecency * c.recency;
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> string_array(std::string_view json_text) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = json::parse(parser, json_text, "source_refs");
  std::vector<std::string> out;
  for (simdjson::dom::element e : doc.get_array()) out.emplace_back(e.get_string().value());
  return out;
}

} // namespace

Retrieval retrieve(store::Store &store, const Query &q, const token::Counter &counter) {
  Retrieval r;
  std::string keys = scope_keys(q.scopes);
  std::vector<Candidate> found;
  bool done = false;
  if (q.match == Match::kFts) {
    std::string fq = fts_query(q.text);
    if (fq.find_first_not_of(" \t\r\n") != std::string::npos) {
      try {
        found = candidates(store, kSearch, q, fq, keys);
        r.fts_query = std::move(fq);
        done = true;
      } catch (const SQLite::Exception &) {
        r.fell_back = true; // not FTS5 syntax: plain words, never an error
      }
    }
  }
  if (!done) {
    r.fts_query = words_query(q.text, q.match == Match::kAll);
    found = r.fts_query.empty() ? candidates(store, kBrowse, q, "", keys)
                                : candidates(store, kSearch, q, r.fts_query, keys);
  }
  std::sort(found.begin(), found.end(), [](const Candidate &a, const Candidate &b) {
    return a.score != b.score ? a.score > b.score : a.memory_id < b.memory_id;
  });
  for (const Candidate &c : found) {
    if (int64_t(r.included.size()) == q.limit) break;
    auto d = store.statement(kDetails);
    store::bind_text(*d, 1, c.memory_id);
    d->bind(2, c.version);
    if (!d->executeStep()) continue;
    Retrieved m;
    m.content = d->getColumn(3).getString();
    m.tokens = counter.count(m.content);
    if (q.budget && r.used_tokens + m.tokens > *q.budget) {
      r.excluded.push_back({c.memory_id, m.tokens, c.score, "budget"});
      continue;
    }
    m.memory_id = c.memory_id;
    m.version = c.version;
    m.scope = d->getColumn(0).getString();
    m.scope_id = d->getColumn(1).getString();
    m.kind = d->getColumn(2).getString();
    m.source_refs = string_array(d->getColumn(4).getString());
    m.event_id = d->getColumn(5).getString();
    if (!d->getColumn(6).isNull()) m.expires_at = d->getColumn(6).getInt64();
    m.sensitive = d->getColumn(7).getInt() != 0;
    m.score = c.score;
    m.text = c.text;
    m.priority = c.priority;
    m.confidence = c.confidence;
    m.recency = c.recency;
    m.valid_from = c.valid_from;
    r.used_tokens += m.tokens;
    r.included.push_back(std::move(m));
  }
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
