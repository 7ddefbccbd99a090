// bm25.hpp — ctxdb_bm25, FTS5's bm25() for memory retrieval, with the
// statistics of the whole table counted once per retrieval instead of once
// per query.
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
// sizes is the row's memory_fts_docsize.sz when the query joins it (a
// seek on a cursor the query keeps open, where FTS5 runs a statement of
// its own for every row), or NULL for FTS5 to look it up.
//
// The score is bm25()'s to the bit: the same formula with its operations
// in the same order (tests/engine/memory_test.cpp compares the two).
#pragma once

#include <vector>

struct sqlite3;

namespace ctxdb::memory {

struct Bm25Stats {
  bool ready = false;
  double avgdl = 0;         // tokens per row
  std::vector<double> idf;  // per phrase of the MATCH expression
  std::vector<double> freq; // scratch: the weighted hits of a row, per phrase
};

inline constexpr char kBm25StatsType[] = "ctxdb_bm25_stats";

// Registers ctxdb_bm25 on the connection (store.cpp, on every open).
void register_bm25(sqlite3 *db);

} // namespace ctxdb::memory
