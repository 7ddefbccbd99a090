#include "project/search_index.hpp"

#include "error.hpp"
#include "project/messages.hpp"
#include "project/search_query.hpp"
#include "json/json_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace ctxdb::project {

namespace {

constexpr char kIndexWords[] = "INSERT INTO search_words(rowid,text) "
                               "SELECT pos,text FROM search_text WHERE pos BETWEEN ?1 AND ?2";
constexpr char kIndexGrams[] = "INSERT INTO search_grams(rowid,text) "
                               "SELECT pos,text FROM search_text WHERE pos BETWEEN ?1 AND ?2";
constexpr char kProbeWords[] = "SELECT rowid FROM search_words WHERE search_words MATCH ?1 LIMIT 1";
constexpr char kProbeGrams[] = "SELECT rowid FROM search_grams WHERE search_grams MATCH ?1 LIMIT 1";
constexpr char kEvent[] = "SELECT session_no,seq,ts,type,id FROM events WHERE pos=?1";
constexpr char kSessionId[] = "SELECT session_id FROM chains WHERE session_no=?1";

constexpr const char *kMessageTypes[] = {"UserPromptSubmitted", "AssistantMessageCreated",
                                         "ToolCallFinished", "ToolCallFailed",
                                         "CompactionCompleted"};
constexpr int64_t kMaxLimit = 1000;
constexpr size_t kScanContextBytes = 60;

// " AND …" over events e for the filters; bind_filters binds it from `first`.
std::string filter_sql(const SearchFilters &f) {
  std::string sql;
  if (f.session_no) sql += " AND e.session_no=?";
  if (f.path) {
    sql += " AND (";
    for (size_t i = 0; i < f.path->size(); ++i)
      sql += i ? " OR e.seq BETWEEN ? AND ?" : "e.seq BETWEEN ? AND ?";
    sql += f.path->empty() ? "0)" : ")";
  }
  if (!f.types.empty()) {
    sql += " AND e.type IN (";
    for (size_t i = 0; i < f.types.size(); ++i) sql += i ? ",?" : "?";
    sql += ")";
  }
  if (f.since) sql += " AND e.ts>=?";
  if (f.until) sql += " AND e.ts<=?";
  return sql;
}

int bind_filters(SQLite::Statement &q, int i, const SearchFilters &f) {
  if (f.session_no) q.bind(i++, *f.session_no);
  if (f.path)
    for (const log::Segment &s : *f.path) {
      q.bind(i++, s.first_seq);
      q.bind(i++, s.last_seq);
    }
  for (const std::string &t : f.types) q.bind(i++, t);
  if (f.since) q.bind(i++, *f.since);
  if (f.until) q.bind(i++, *f.until);
  return i;
}

std::string ascii_lower(std::string s) {
  for (char &c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}

std::string format_rank(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", r);
  return buf;
}

} // namespace

struct SearchIndex::Hit {
  int64_t pos, session_no, seq, ts;
  std::string type, event_id;
  double rank;
  const char *match; // words | substring | scan
  std::string snippet;
};

std::span<const char *const> SearchIndex::tables() const {
  static const char *const kTables[] = {"search_words", "search_grams"};
  return kTables;
}

std::vector<std::string> SearchIndex::types_of_role(std::string_view role) {
  std::vector<std::string> out;
  for (const char *t : kMessageTypes)
    if (const char *r = Messages::role_of(t); r && role == r) out.emplace_back(t);
  return out;
}

void SearchIndex::on_append(const log::Event &e) {
  if (!Messages::role_of(e.type)) return;
  // A transaction's events have consecutive pos, and the view skips the
  // events that carry no message: the range is all flush() needs.
  if (first_pos_ == 0) first_pos_ = e.pos;
  last_pos_ = e.pos;
}

// The log writes its events before it flushes the projections, so the
// view sees them here.
void SearchIndex::flush() {
  if (first_pos_ == 0) return;
  for (const char *sql : {kIndexWords, kIndexGrams}) {
    auto q = store_.statement(sql);
    q->bind(1, first_pos_);
    q->bind(2, last_pos_);
    q->exec();
  }
  first_pos_ = last_pos_ = 0;
}

bool SearchIndex::parses(const char *table, const std::string &match) {
  try {
    auto q =
        store_.statement(table == std::string_view("search_words") ? kProbeWords : kProbeGrams);
    q->bind(1, match);
    q->executeStep();
    return true;
  } catch (const SQLite::Exception &) {
    return false; // fts5: syntax error, no such column, …
  }
}

// Binds the needles (lower-cased, for instr) from parameter i, then the
// LIMIT; returns the hits found so far, which the query may find again.
std::set<int64_t> SearchIndex::bind_needles(SQLite::Statement &q, int i,
                                            const std::vector<std::string> &needles, int64_t limit,
                                            const std::vector<Hit> &hits) {
  for (const std::string &n : needles) q.bind(i++, ascii_lower(n));
  q.bind(i, limit + int64_t(hits.size())); // as many more as may come again
  std::set<int64_t> seen;
  for (const Hit &h : hits) seen.insert(h.pos);
  return seen;
}

void SearchIndex::run_fts(const char *table, const std::string &match,
                          const std::vector<std::string> &needles, const SearchFilters &f,
                          const char *kind, std::vector<Hit> &hits) {
  std::string t = table;
  bool words = t == "search_words";
  // The FTS table alone in FROM, so FTS5 ranks the matches itself (bm25
  // reads no text) and hands them over best first: the filters (a lookup
  // of the event by pos) run on the rows read until LIMIT is reached, and
  // snippet() on the rows returned. A join with events would filter and
  // snippet every match before sorting.
  std::string sql = "SELECT rowid,rank,snippet(" + t + ",0,'«','»','…'," + (words ? "16" : "48") +
                    ") FROM " + t + " WHERE " + t + " MATCH ?";
  std::string filters = filter_sql(f);
  if (!filters.empty())
    sql += " AND EXISTS(SELECT 1 FROM events e WHERE e.pos=" + t + ".rowid" + filters + ")";
  for (size_t i = 0; i < needles.size(); ++i) sql += " AND instr(lower(" + t + ".text),?)>0";
  sql += " ORDER BY rank LIMIT ?";
  SQLite::Statement q(store_.db(), sql);
  int i = 1;
  q.bind(i++, match);
  i = bind_filters(q, i, f);
  std::set<int64_t> seen = bind_needles(q, i, needles, f.limit, hits);
  while (q.executeStep() && int64_t(hits.size()) < f.limit) {
    int64_t pos = q.getColumn(0).getInt64();
    if (seen.count(pos)) continue;
    Hit h{pos, 0, 0, 0, "", "", q.getColumn(1).getDouble(), kind, q.getColumn(2).getString()};
    auto e = store_.statement(kEvent);
    e->bind(1, pos);
    if (!e->executeStep()) continue; // cannot happen: every indexed pos is an event
    h.session_no = e->getColumn(0).getInt64();
    h.seq = e->getColumn(1).getInt64();
    h.ts = e->getColumn(2).getInt64();
    h.type = e->getColumn(3).getString();
    h.event_id = e->getColumn(4).getString();
    hits.push_back(std::move(h));
  }
}

void SearchIndex::run_scan(const std::vector<std::string> &needles, const SearchFilters &f,
                           std::vector<Hit> &hits) {
  std::string sql = "SELECT e.pos,e.session_no,e.seq,e.ts,e.type,e.id,s.text "
                    "FROM search_text s JOIN events e ON e.pos=s.pos WHERE 1" +
                    filter_sql(f);
  for (size_t i = 0; i < needles.size(); ++i) sql += " AND instr(lower(s.text),?)>0";
  // Newest first; within one session by seq, the order of its index, so
  // the scan stops at the limit instead of reading the whole session.
  sql += f.session_no ? " ORDER BY e.seq DESC LIMIT ?" : " ORDER BY e.pos DESC LIMIT ?";
  SQLite::Statement q(store_.db(), sql);
  int i = bind_filters(q, 1, f);
  std::set<int64_t> seen = bind_needles(q, i, needles, f.limit, hits);
  while (q.executeStep() && int64_t(hits.size()) < f.limit) {
    int64_t pos = q.getColumn(0).getInt64();
    if (seen.count(pos)) continue;
    hits.push_back({pos, q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
                    q.getColumn(3).getInt64(), q.getColumn(4).getString(),
                    q.getColumn(5).getString(), 0.0, "scan",
                    mark_snippet(q.getColumn(6).getString(), needles[0], kScanContextBytes)});
  }
}

std::string SearchIndex::session_id(int64_t session_no) {
  auto q = store_.statement(kSessionId);
  q->bind(1, session_no);
  return q->executeStep() ? q->getColumn(0).getString() : std::string();
}

std::string SearchIndex::search(std::string_view query, const SearchFilters &f) {
  std::vector<std::string> terms = split_terms(query);
  if (terms.empty()) throw Error(Code::kInvalidArg, "search: the query is empty");
  if (f.limit < 1 || f.limit > kMaxLimit)
    throw Error(Code::kInvalidArg, "search: limit must be 1.." + std::to_string(kMaxLimit));
  std::vector<Hit> hits;
  std::string q(query);
  bool fts = looks_like_fts(query) && parses("search_words", q);
  // 1. Words.
  std::vector<std::string> words = word_terms(terms);
  if (fts || !words.empty())
    run_fts("search_words", fts ? q : plain_match(words), {}, f, "words", hits);
  // 2. Substrings, for what words did not fill.
  if (int64_t(hits.size()) < f.limit) {
    if (fts) {
      if (parses("search_grams", q)) run_fts("search_grams", q, {}, f, "substring", hits);
    } else {
      std::vector<std::string> long_terms, short_terms;
      for (const std::string &t : terms)
        (utf8_length(t) >= 3 ? long_terms : short_terms).push_back(t);
      if (!long_terms.empty())
        run_fts("search_grams", plain_match(long_terms), short_terms, f, "substring", hits);
      else if (std::any_of(short_terms.begin(), short_terms.end(),
                           [](const std::string &t) { return has_cjk(t); }))
        run_scan(short_terms, f, hits);
    }
  }
  json::JsonWriter w;
  w.begin_object()
      .field("query", query)
      .field("syntax", fts ? "fts" : "plain")
      .key("hits")
      .begin_array();
  std::map<int64_t, std::string> sessions;
  for (const Hit &h : hits) {
    auto it = sessions.find(h.session_no);
    if (it == sessions.end()) it = sessions.emplace(h.session_no, session_id(h.session_no)).first;
    w.begin_object()
        .field("session_id", it->second)
        .field("branch_id", tree_.branch(tree_.branch_of(h.session_no, h.seq)).id)
        .field("event_id", h.event_id)
        .field("seq", h.seq)
        .field("ts", h.ts)
        .field("type", h.type)
        .field("role", Messages::role_of(h.type))
        .field("match", h.match)
        .raw_field("rank", format_rank(h.rank))
        .field("snippet", h.snippet)
        .end_object();
  }
  w.end_array().end_object();
  return w.take();
}

} // namespace ctxdb::project
