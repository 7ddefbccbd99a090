// bm25.hpp — ctxdb_bm25, FTS5's bm25() for memory retrieval, with the
// statistics of the whole table counted once per retrieval instead of once
// per query, and kept on the connection across retrievals until the file
// changes.
//
// bm25() counts, on the first row of each query, the rows of the whole
// table that match each phrase: a walk of every phrase's doclist over all
// of memory_fts. Retrieval runs one query per scope with the same MATCH
// expression in one read snapshot, so it hands every query the same
// Bm25Stats (bound with sqlite3_bind_pointer, type kBm25StatsType) and
// the queries after the first reuse what it counted.
//
//   ctxdb_bm25(memory_fts, ?stats, sizes, w0, w1, ...)    w: column weights
//
// Across retrievals: counting a phrase's rows walks its doclist over the
// whole table (at 1M memories a fifth of a retrieval's instructions), and
// the counts change only when memory_fts does. So the connection keeps
// them (registered with ctxdb_bm25, freed with the connection), each under
// its phrase's key (Bm25Stats::keys: the phrase as the query wrote it),
// with the table's row and token totals, for as long as the table's count
// of changes (Bm25Stats::changes: memory_changes of schema 15, which the
// caller reads in the query's snapshot; every row memory_fts gains or
// loses is one of memory_rank's, which it counts) stays the one they were
// counted at, whoever changed the file. Appends of other events and the
// usage a retrieval records leave them kept (they were keyed on the
// file's data version, which every commit changes, until schema 15).
// Inside a write transaction (whose own changes are not committed, and
// may be rolled back) nothing is kept or served: the statistics are
// counted as before.
//
// sizes is the row's memory_fts_docsize.sz when the query joins it (a
// seek on a cursor the query keeps open, where FTS5 runs a statement of
// its own for every row), or NULL for FTS5 to look it up.
//
// The score is bm25()'s to the bit: the same formula with its operations
// in the same order (tests/engine/memory_test.cpp compares the two).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace ctxdb::memory {

struct Bm25Stats {
  // Set by the caller: each phrase's cache key, in the MATCH expression's
  // order (a phrase as written counts the same rows in any expression);
  // or, when `keys` is empty, the expression itself, each phrase's key
  // then the expression and its number; both empty: no cache.
  std::vector<std::string> keys;
  std::string expression;
  // memory_changes' count in the query's snapshot; none: nothing is kept
  // or served across retrievals.
  std::optional<int64_t> changes;
  int64_t walked = 0; // phrases whose doclists were walked, not served kept
  bool ready = false;
  double avgdl = 0;         // tokens per row
  std::vector<double> idf;  // per phrase of the MATCH expression
  std::vector<double> freq; // scratch: the weighted hits of a row, per phrase
};

inline constexpr char kBm25StatsType[] = "ctxdb_bm25_stats";

// Registers ctxdb_bm25 on the connection (store.cpp, on every open).
void register_bm25(sqlite3 *db);

} // namespace ctxdb::memory
