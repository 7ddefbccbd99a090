// search_index.hpp — search of sessions (issue 8): the full-text indexes
// over every message's text (schema/sql/008_search.sql) and the queries
// over them.
//
// Indexing. Two FTS5 tables, both external content over the view
// search_text (a message event's text, rendered from its payload by SQL),
// keyed by the event's pos: search_words (unicode61: words, bm25) and
// search_grams (trigram: any substring of 3+ characters, so Chinese and
// Japanese, pieces of identifiers and paths). An append notes the range
// of pos it added; flush() indexes it with one INSERT … SELECT per table,
// after the log has written the events. Rebuild clears both with FTS5's
// 'delete-all' and replays (project/rebuild.cpp).
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
};

class SearchIndex : public Projection {
public:
  SearchIndex(store::Store &store, log::Tree &tree) : store_(store), tree_(tree) {}

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override { first_pos_ = last_pos_ = 0; }
  std::span<const char *const> tables() const override;

  // The hits for `query` (schema/json/search_result.schema.json). An empty
  // query is kInvalidArg; a query that is not valid FTS5 is plain words.
  // The caller holds a read transaction (filters and hits agree).
  std::string search(std::string_view query, const SearchFilters &filters);

  // The event types that carry a message of `role`, or empty for none.
  static std::vector<std::string> types_of_role(std::string_view role);

private:
  struct Hit;
  bool parses(const char *table, const std::string &match);
  void run_fts(const char *table, const std::string &match, const std::vector<std::string> &needles,
               const SearchFilters &f, const char *kind, std::vector<Hit> &hits);
  static std::set<int64_t> bind_needles(SQLite::Statement &q, int i,
                                        const std::vector<std::string> &needles, int64_t limit,
                                        const std::vector<Hit> &hits);
  void run_scan(const std::vector<std::string> &needles, const SearchFilters &f,
                std::vector<Hit> &hits);
  std::string session_id(int64_t session_no);

  store::Store &store_;
  log::Tree &tree_;
  int64_t first_pos_ = 0, last_pos_ = 0; // the message events not yet indexed
};

} // namespace ctxdb::project
