#include "project/search_index.hpp"

#include "error.hpp"
#include "project/messages.hpp"
#include "project/search_query.hpp"
#include "json/json_writer.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace ctxdb::project {

namespace {

// Indexing (pos in (?1, ?2]): the project's tables, or the private copy of
// a handle that cannot write (temp schema, see search_index.hpp).
constexpr char kIndexWords[] = "INSERT INTO main.search_words(rowid,text) "
                               "SELECT pos,text FROM search_text WHERE pos>?1 AND pos<=?2";
constexpr char kIndexGrams[] = "INSERT INTO main.search_grams(rowid,text) "
                               "SELECT pos,text FROM search_text WHERE pos>?1 AND pos<=?2";
constexpr char kIndexTailWords[] = "INSERT INTO temp.search_tail_words(rowid,text) "
                                   "SELECT pos,text FROM search_text WHERE pos>?1 AND pos<=?2";
constexpr char kIndexTailGrams[] = "INSERT INTO temp.search_tail_grams(rowid,text) "
                                   "SELECT pos,text FROM search_text WHERE pos>?1 AND pos<=?2";
// The private copy: a view naming the project's (FTS5 reads an external
// content table from its own schema) and two tables tokenized as in
// schema/sql/017_search_words_cjk.sql.
constexpr char kCreateTail[] =
    "CREATE TEMP VIEW IF NOT EXISTS search_tail_text(pos,text) AS "
    "SELECT pos,text FROM main.search_text;"
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_tail_words USING fts5(text,"
    " content='search_tail_text', content_rowid='pos', tokenize='ctxdb_words remove_diacritics 2');"
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.search_tail_grams USING fts5(text,"
    " content='search_tail_text', content_rowid='pos', tokenize='trigram');";
constexpr char kClearTail[] =
    "INSERT INTO temp.search_tail_words(search_tail_words) VALUES('delete-all');"
    "INSERT INTO temp.search_tail_grams(search_tail_grams) VALUES('delete-all');";
constexpr char kMark[] = "SELECT pos FROM search_mark WHERE id=1";
constexpr char kSetMark[] = "INSERT OR REPLACE INTO search_mark(id,pos) VALUES(1,?1)";
constexpr char kLastEvent[] = "SELECT ifnull(max(pos),0) FROM events";
constexpr char kProbeWords[] = "SELECT rowid FROM search_words WHERE search_words MATCH ?1 LIMIT 1";
constexpr char kProbeGrams[] = "SELECT rowid FROM search_grams WHERE search_grams MATCH ?1 LIMIT 1";
constexpr char kEvent[] = "SELECT session_no,seq,ts,type,id FROM events WHERE pos=?1";
constexpr char kSessionId[] = "SELECT session_id FROM chains WHERE session_no=?1";

constexpr const char *kMessageTypes[] = {
    "UserPromptSubmitted", "AssistantMessageCreated", "ToolCallFinished", "ToolCallFailed",
    "ToolCallCancelled",   "CompactionCompleted",     "BranchSummarized", "ContextAdded"};
constexpr int64_t kMaxLimit = 1000;
constexpr size_t kContextBytes = 60; // either side of a match we mark ourselves
constexpr char kDamagedPayload[] =
    "SELECT id FROM events WHERE pos>? AND pos<=? AND payload IS NOT "
    "NULL AND NOT json_valid(payload) ORDER BY pos LIMIT 1";

// The snippet of a hit of `text`, given the one cut from the stored text:
// kept unless the redaction changes the text, else marked anew on the
// redacted text (see SearchFilters::redact).
std::string redacted_snippet(std::string text, std::string snippet, const SearchFilters &f,
                             util::CaselessFinder *marker) {
  if (!f.redact || !f.redact(text)) return snippet;
  return mark_snippet(text, marker, kContextBytes);
}

// n >= 1 copies of `term` joined by `op`, nested as a balanced tree: SQLite
// nests a flat chain one level per term and refuses a statement past 1000
// levels (a long path's runs, a query of many short terms).
std::string balanced(std::string_view term, size_t n, std::string_view op) {
  if (n == 1) return std::string(term);
  size_t half = n / 2;
  return "(" + balanced(term, half, op) + " " + std::string(op) + " " +
         balanced(term, n - half, op) + ")";
}

// " AND ctxdb_contains(<text>,?)" for each needle (case folded as the
// FTS5 tables fold it, store.cpp), or nothing.
std::string needles_sql(const std::string &text, size_t needles) {
  if (needles == 0) return "";
  return " AND " + balanced("ctxdb_contains(" + text + ",?)", needles, "AND");
}

// " AND …" over events e for the filters; bind_filters binds it from `first`.
std::string filter_sql(const SearchFilters &f) {
  std::string sql;
  if (f.session_no) sql += " AND e.session_no=?";
  if (f.path)
    sql += f.path->empty() ? " AND 0"
                           : " AND " + balanced("e.seq BETWEEN ? AND ?", f.path->size(), "OR");
  if (!f.types.empty()) {
    sql += " AND e.type IN (";
    for (size_t i = 0; i < f.types.size(); ++i) sql += i ? ",?" : "?";
    sql += ")";
  }
  if (f.since) sql += " AND e.ts>=?";
  if (f.until) sql += " AND e.ts<=?";
  if (!f.allow_sensitive) sql += " AND NOT ctxdb_sensitive(e.visibility)";
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

// One FTS5 table a query runs on, and the rowids it answers for.
struct SearchIndex::Source {
  std::string table;
  std::string rowids; // "" or " AND rowid<=N" / " AND rowid>N"
};

std::span<const char *const> SearchIndex::tables() const {
  static const char *const kTables[] = {"search_words", "search_grams", "search_mark"};
  return kTables;
}

std::vector<std::string> SearchIndex::types_of_role(std::string_view role) {
  std::vector<std::string> out;
  for (const char *t : kMessageTypes)
    if (const char *r = Messages::role_of(t); r && role == r) out.emplace_back(t);
  return out;
}

void SearchIndex::on_append(const log::Event &e) { last_pos_ = e.pos; }

// The log writes its events before it flushes the projections, so the
// view sees them here. A missing mark is a rebuild's replay (rebuild
// deletes it with the other tables): the whole log is indexed.
void SearchIndex::flush() {
  int64_t last = last_pos_;
  last_pos_ = 0;
  std::optional<int64_t> m = mark();
  if (!m || last - *m > store_.config().search_index_lag) index_to_end(m);
}

std::optional<int64_t> SearchIndex::mark() {
  auto q = store_.statement(kMark);
  if (!q->executeStep()) return std::nullopt;
  return q->getColumn(0).getInt64();
}

int64_t SearchIndex::last_event_pos() {
  auto q = store_.statement(kLastEvent);
  q->executeStep();
  return q->getColumn(0).getInt64();
}

void SearchIndex::index_range(int64_t after, int64_t upto, bool tail) {
  try {
    for (const char *sql :
         {tail ? kIndexTailWords : kIndexWords, tail ? kIndexTailGrams : kIndexGrams}) {
      auto q = store_.statement(sql);
      q->bind(1, after);
      q->bind(2, upto);
      q->exec();
    }
  } catch (const SQLite::Exception &) {
    // The view reads payloads with SQLite's JSON functions, which fail
    // ("malformed JSON") on a payload the file no longer holds intact.
    auto q = store_.statement(kDamagedPayload);
    q->bind(1, after);
    q->bind(2, upto);
    if (q->executeStep())
      throw Error(Code::kCorrupt, "the payload of event '" + q->getColumn(0).getString() +
                                      "' is damaged: not valid JSON");
    throw;
  }
}

// In the caller's write transaction.
void SearchIndex::index_to_end(std::optional<int64_t> m) {
  int64_t last = last_event_pos();
  if (m && *m >= last) return;
  index_range(m.value_or(0), last, false);
  auto q = store_.statement(kSetMark);
  q->bind(1, last);
  q->exec();
}

namespace {

// Sets the connection's busy timeout for its lifetime, then restores it.
class BusyTimeout {
public:
  BusyTimeout(store::Store &store, int ms) : store_(store) { store_.db().setBusyTimeout(ms); }
  ~BusyTimeout() { store_.db().setBusyTimeout(store_.config().busy_timeout_ms); }
  BusyTimeout(const BusyTimeout &) = delete;
  BusyTimeout &operator=(const BusyTimeout &) = delete;

private:
  store::Store &store_;
};

} // namespace

bool SearchIndex::catch_up() {
  if (store_.config().read_only) return false;
  std::optional<int64_t> m = mark(); // a look without a lock: up to date is the common case
  if (m && *m >= last_event_pos()) return true;
  try {
    // Not waiting for the lock: a search that cannot index searches the
    // events above the mark itself, which costs less than waiting.
    std::optional<store::Store::WriteTransaction> tx;
    {
      BusyTimeout no_wait(store_, 0);
      tx.emplace(store_);
    }
    index_to_end(mark());
    tx->commit();
    return true;
  } catch (const SQLite::Exception &e) {
    // Lock taken, or a file that cannot be written although the handle
    // was not opened read-only: the search goes on without indexing.
    int rc = e.getErrorCode() & 0xFF;
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED && rc != SQLITE_READONLY) throw;
    return false;
  }
}

// The private copy holds (tail_from_, tail_to_]; it answers for (mark,
// last] once extended to last, and starts again from the mark when the
// mark has passed all of it (another handle caught up) or went back (a
// rebuild of another process).
void SearchIndex::sync_tail(int64_t m, int64_t last) {
  if (!tail_ready_) {
    store_.db().exec(kCreateTail);
    tail_ready_ = true;
    tail_from_ = tail_to_ = m;
  }
  if (m < tail_from_ || m >= tail_to_) {
    if (tail_to_ > tail_from_) store_.db().exec(kClearTail);
    tail_from_ = tail_to_ = m;
  }
  if (last > tail_to_) index_range(tail_to_, last, true);
  tail_to_ = std::max(tail_to_, last);
}

std::vector<SearchIndex::Source> SearchIndex::sources(const char *table) const {
  if (!tail_above_) return {{table, ""}};
  std::string t = table, above = std::to_string(*tail_above_);
  std::string tail = t == "search_words" ? "search_tail_words" : "search_tail_grams";
  return {{t, " AND " + t + ".rowid<=" + above}, {tail, " AND " + tail + ".rowid>" + above}};
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

// Binds the needles from parameter i, then the
// LIMIT; returns the hits found so far, which the query may find again.
std::set<int64_t> SearchIndex::bind_needles(SQLite::Statement &q, int i,
                                            const std::vector<std::string> &needles, int64_t limit,
                                            const std::vector<Hit> &hits) {
  for (const std::string &n : needles) q.bind(i++, n);
  q.bind(i, limit + int64_t(hits.size())); // as many more as may come again
  std::set<int64_t> seen;
  for (const Hit &h : hits) seen.insert(h.pos);
  return seen;
}

// Each source's best hits, merged by rank (the sources hold disjoint pos).
void SearchIndex::run_fts(const char *table, const std::string &match,
                          const std::vector<std::string> &needles, const SearchFilters &f,
                          const char *kind, std::string_view mark, std::vector<Hit> &hits) {
  std::vector<Hit> found;
  for (const Source &s : sources(table)) query_fts(s, match, needles, f, kind, mark, hits, found);
  std::stable_sort(found.begin(), found.end(),
                   [](const Hit &a, const Hit &b) { return a.rank < b.rank; });
  for (Hit &h : found) {
    if (int64_t(hits.size()) >= f.limit) break;
    hits.push_back(std::move(h));
  }
}

void SearchIndex::query_fts(const Source &s, const std::string &match,
                            const std::vector<std::string> &needles, const SearchFilters &f,
                            const char *kind, std::string_view mark, const std::vector<Hit> &hits,
                            std::vector<Hit> &found) {
  const std::string &t = s.table;
  bool grams = t.ends_with("_grams");
  // The FTS table alone in FROM, so FTS5 ranks the matches itself (bm25
  // reads no text) and hands them over best first: the filters (a lookup
  // of the event by pos) run on the rows read until LIMIT is reached, and
  // snippet() on the rows returned. A join with events would filter and
  // snippet every match before sorting.
  // A substring hit's text is read (from the view, for the hits only) and
  // marked here: SQLite 3.40's snippet() over the trigram table repeats
  // text where matches overlap ("m«issi»ssippi river«issi»ppi river").
  std::string sql = "SELECT rowid,rank," + t + ".text" +
                    (grams ? "" : ",snippet(" + t + ",0,'«','»','…',16)") + " FROM " + t +
                    " WHERE " + t + " MATCH ?" + s.rowids;
  std::string filters = filter_sql(f);
  if (!filters.empty())
    sql += " AND EXISTS(SELECT 1 FROM events e WHERE e.pos=" + t + ".rowid" + filters + ")";
  sql += needles_sql(t + ".text", needles.size());
  sql += " ORDER BY rank LIMIT ?";
  SQLite::Statement q(store_.db(), sql);
  std::optional<util::CaselessFinder> marker;
  if (!mark.empty()) marker.emplace(mark);
  int i = 1;
  q.bind(i++, match);
  i = bind_filters(q, i, f);
  std::set<int64_t> seen = bind_needles(q, i, needles, f.limit, hits);
  size_t wanted = size_t(f.limit) - std::min(size_t(f.limit), hits.size()) + found.size();
  while (found.size() < wanted && q.executeStep()) {
    int64_t pos = q.getColumn(0).getInt64();
    if (seen.count(pos)) continue;
    std::string text = q.getColumn(2).getString();
    util::CaselessFinder *finder = marker ? &*marker : nullptr;
    std::string snippet =
        grams ? mark_snippet(text, finder, kContextBytes) : q.getColumn(3).getString();
    Hit h{pos,
          0,
          0,
          0,
          "",
          "",
          q.getColumn(1).getDouble(),
          kind,
          redacted_snippet(std::move(text), std::move(snippet), f, finder)};
    auto e = store_.statement(kEvent);
    e->bind(1, pos);
    if (!e->executeStep()) continue; // cannot happen: every indexed pos is an event
    h.session_no = e->getColumn(0).getInt64();
    h.seq = e->getColumn(1).getInt64();
    h.ts = e->getColumn(2).getInt64();
    h.type = e->getColumn(3).getString();
    h.event_id = e->getColumn(4).getString();
    found.push_back(std::move(h));
  }
}

void SearchIndex::run_scan(const std::vector<std::string> &needles, const SearchFilters &f,
                           std::vector<Hit> &hits) {
  std::string sql = "SELECT e.pos,e.session_no,e.seq,e.ts,e.type,e.id,s.text "
                    "FROM search_text s JOIN events e ON e.pos=s.pos WHERE 1" +
                    filter_sql(f);
  sql += needles_sql("s.text", needles.size());
  // Newest first; within one session by seq, the order of its index, so
  // the scan stops at the limit instead of reading the whole session.
  sql += f.session_no ? " ORDER BY e.seq DESC LIMIT ?" : " ORDER BY e.pos DESC LIMIT ?";
  SQLite::Statement q(store_.db(), sql);
  int i = bind_filters(q, 1, f);
  std::set<int64_t> seen = bind_needles(q, i, needles, f.limit, hits);
  util::CaselessFinder marker(needles[0]);
  while (q.executeStep() && int64_t(hits.size()) < f.limit) {
    int64_t pos = q.getColumn(0).getInt64();
    if (seen.count(pos)) continue;
    std::string text = q.getColumn(6).getString();
    std::string snippet = mark_snippet(text, &marker, kContextBytes);
    hits.push_back({pos, q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
                    q.getColumn(3).getInt64(), q.getColumn(4).getString(),
                    q.getColumn(5).getString(), 0.0, "scan",
                    redacted_snippet(std::move(text), std::move(snippet), f, &marker)});
  }
}

std::string SearchIndex::session_id(int64_t session_no) {
  auto q = store_.statement(kSessionId);
  q->bind(1, session_no);
  return q->executeStep() ? q->getColumn(0).getString() : std::string();
}

std::string SearchIndex::search(std::string_view query_text, const SearchFilters &f) {
  // FTS5 reads a bound expression only up to a NUL: one would cut a term
  // (or a quoted phrase) short. A NUL separates terms, as a space does.
  std::string spaced(query_text);
  std::replace(spaced.begin(), spaced.end(), '\0', ' ');
  std::string_view query = spaced;
  // A quoted term alone is the term: as plain words it reaches the
  // substring step and the scan, which "错误" or "->" need.
  std::optional<std::string> one = one_quoted_term(query);
  std::string_view text = one ? std::string_view(*one) : query;
  std::vector<std::string> terms = split_terms(text);
  if (terms.empty()) throw Error(Code::kInvalidArg, "search: the query is empty");
  if (f.limit < 1 || f.limit > kMaxLimit)
    throw Error(Code::kInvalidArg, "search: limit must be 1.." + std::to_string(kMaxLimit));
  // Read in the caller's snapshot: the events above the mark are searched
  // through the private copy (catch_up() could not index them).
  std::optional<int64_t> m = mark();
  int64_t last = last_event_pos();
  tail_above_.reset();
  if (last > m.value_or(0)) {
    sync_tail(m.value_or(0), last);
    tail_above_ = m.value_or(0);
  }
  std::vector<Hit> hits;
  std::string q(text);
  bool fts = looks_like_fts(text) && parses("search_words", q);
  // 1. Words.
  // A term of punctuation alone ("->") has no word token: the words a
  // plain query has must be found with it as a substring.
  std::vector<std::string> words = word_terms(terms), symbols;
  for (const std::string &t : terms)
    if (std::find(words.begin(), words.end(), t) == words.end()) symbols.push_back(t);
  if (fts || !words.empty())
    run_fts("search_words", fts ? q : plain_match(words),
            fts ? std::vector<std::string>{} : symbols, f, "words",
            fts ? first_long_fts_term(q) : std::string_view(words[0]), hits);
  // 2. Substrings, for what words did not fill.
  if (int64_t(hits.size()) < f.limit) {
    if (fts) {
      // Skipped with a short term (the trigram table would drop it from
      // the expression's meaning, not just from its matches) and with NOT
      // (it would let back in what the words table excluded: no folding of
      // diacritics or punctuation there).
      if (!has_short_fts_term(q) && !has_fts_not(q) && parses("search_grams", q))
        run_fts("search_grams", q, {}, f, "substring", first_long_fts_term(q), hits);
    } else if (!std::all_of(terms.begin(), terms.end(), all_cjk)) {
      // (Terms of CJK alone were found wherever they occur by the words
      // step: its tokenizer makes each CJK character a word.)
      std::vector<std::string> long_terms, short_terms;
      for (const std::string &t : terms)
        (utf8_length(t) >= 3 ? long_terms : short_terms).push_back(t);
      if (!long_terms.empty())
        run_fts("search_grams", plain_match(long_terms), short_terms, f, "substring", long_terms[0],
                hits);
      else if (std::any_of(short_terms.begin(), short_terms.end(), [](const std::string &t) {
                 return has_cjk(t) || word_terms({t}).empty();
               }))
        // What no index can find: symbols (->, ㈱), and a short CJK word
        // beside short terms that are pieces of words (数据 σφ).
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
