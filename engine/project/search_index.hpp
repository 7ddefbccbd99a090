// search_index.hpp — search of sessions: the full-text indexes
// over every message's text (schema/sql/008_search.sql) and the queries
// over them.
//
// Indexing is deferred: an append does not index its messages (the FTS5
// work, above all the trigram table's, costs several times the append
// itself). search_mark (schema/sql/009) holds the last events.pos that is
// indexed. A search first brings the index up to date when its handle can
// write (catch_up(): one transaction indexes (mark, max pos] with one
// INSERT … SELECT per table and advances the mark); many messages per FTS5
// transaction also cost less than one small FTS5 flush per append. A
// handle that cannot write (read-only, or another writer holds the lock)
// searches the events above the mark through a private copy of the two
// indexes in its connection's temp schema, kept between searches and
// extended as the log grows: the same tokenizers, the same queries, so
// the same messages match. An append whose transaction leaves the index
// more than the config's search_index_lag events behind (default 10000)
// indexes it at commit, so a search never has more than that to catch up.
// The trigram table makes indexing cost several times the append itself
// (bench_append: batches of 1000 run at 0.44 of raw while the index lags,
// ~0.08 over runs long enough to index): a bulk import can set a large lag
// and leave the work to the first search. The index is a function of the
// stored events alone (indexes_log()): a rebuild catches it up to the last
// event and keeps it, or, asked to re-derive it (RebuildOptions::
// log_indexes), clears both tables and the mark with the other
// projections, and indexes the whole log at the end of its replay
// (project/rebuild.hpp).
//
// Ranks: bm25 depends on the whole indexed corpus. A hit in the private
// copy is ranked by bm25 over the events above the mark alone, so with an
// index that is behind, the hits are the same but ranks (and so the order
// of word hits, and which ones fill a limit) may differ from those of an
// index that is up to date.
//
// A query, in order:
//   1. words: the query (plain terms, or FTS5 syntax when it parses, see
//      search_query.hpp) on search_words, best bm25 first;
//   2. substrings, when 1 found fewer hits than the limit: the same terms
//      on search_grams. A term shorter than 3 characters has no trigram:
//      it filters the candidates the longer terms find (instr on the
//      text); when every term is that short and one is Chinese, Japanese
//      or Korean (a two-character word is common there), the messages
//      the filters select are scanned, newest first. Short terms in other
//      scripts are whole words, which step 1 already found.
// Word hits come first, then substring hits, then scanned ones: bm25
// scores of two tables are not comparable, and a whole-word match is the
// better one. Each hit names which step found it ("match").
#pragma once

#include "log/tree.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::project {

struct SearchFilters {
  std::optional<int64_t> session_no;
  // When a branch was named: its path (segments of session_no).
  std::optional<std::vector<log::Segment>> path;
  std::vector<std::string> types;      // event types; empty: every message type
  std::optional<int64_t> since, until; // ts, ms, inclusive
  int64_t limit = 20;
  // Events whose visibility is sensitive (log::is_sensitive) are hits only
  // when allowed, as they enter a compiled bundle only when allowed.
  bool allow_sensitive = false;
  // Rewrites a hit's whole text, replacing the secrets in it (the Engine
  // passes the compiler's built-in redaction); true when it changed it.
  // Such a hit's snippet is cut from the rewritten text: one cut from the
  // stored text could begin or end inside a secret, where the piece shown
  // is no longer recognizable as one.
  std::function<bool(std::string &text)> redact;
};

class SearchIndex : public Projection {
public:
  SearchIndex(store::Store &store, log::Tree &tree) : store_(store), tree_(tree) {}

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override { last_pos_ = 0; }
  std::span<const char *const> tables() const override;
  void before_rebuild() override { index_to_end(mark()); }
  bool indexes_log() const override { return true; }

  // Indexes every event above the mark, in a write transaction of its own,
  // unless another writer holds the lock (then it does not wait). False
  // when it could not (read-only handle, lock busy): search() still finds
  // everything. Call it outside any transaction.
  bool catch_up();

  // The hits for `query` (schema/json/search_result.schema.json). An empty
  // query is kInvalidArg; a query that is not valid FTS5 is plain words.
  // The caller holds a read transaction (filters and hits agree); call
  // catch_up() before it.
  std::string search(std::string_view query, const SearchFilters &filters);

  // The event types that carry a message of `role`, or empty for none.
  static std::vector<std::string> types_of_role(std::string_view role);

private:
  struct Hit;
  struct Source;
  void index_range(int64_t after, int64_t upto, bool tail);
  void index_to_end(std::optional<int64_t> mark);
  std::optional<int64_t> mark();
  int64_t last_event_pos();
  std::vector<Source> sources(const char *table) const;
  void sync_tail(int64_t mark, int64_t last);
  // mark: the term a substring hit's snippet marks (the trigram table's
  // snippet() repeats text where matches overlap); words hits use
  // snippet(), and mark only when their text is redacted.
  void query_fts(const Source &s, const std::string &match, const std::vector<std::string> &needles,
                 const SearchFilters &f, const char *kind, std::string_view mark,
                 const std::vector<Hit> &hits, std::vector<Hit> &found);
  bool parses(const char *table, const std::string &match);
  void run_fts(const char *table, const std::string &match, const std::vector<std::string> &needles,
               const SearchFilters &f, const char *kind, std::string_view mark,
               std::vector<Hit> &hits);
  static std::set<int64_t> bind_needles(SQLite::Statement &q, int i,
                                        const std::vector<std::string> &needles, int64_t limit,
                                        const std::vector<Hit> &hits);
  void run_scan(const std::vector<std::string> &needles, const SearchFilters &f,
                std::vector<Hit> &hits);
  std::string session_id(int64_t session_no);

  store::Store &store_;
  log::Tree &tree_;
  int64_t last_pos_ = 0; // the last message event of the open transaction
  // The private index of the events above the mark (read-only searches):
  // it holds (tail_from_, tail_to_]; tail_mark_ is the mark it was used with.
  bool tail_ready_ = false;
  int64_t tail_from_ = 0, tail_to_ = 0;
  std::optional<int64_t> tail_above_; // this search: the mark, when events lie above it
};

} // namespace ctxdb::project
