// scope_rows.hpp — where a memory's row lies in memory_fts: each scope
// (scope, scope id) owns a contiguous range of rowids, so that retrieval
// asks FTS5 for the matches of the requested scopes only.
//
// FTS5 keeps every term's documents sorted by rowid and seeks to a rowid
// range given in the query (rowid BETWEEN a AND b), so a query ranked by
// bm25 scores the matches of that range alone: a project's 1% of a million
// memories costs about 1% of the matches of the whole table
// (bench/memory.cpp). A memory's doc_id is
//
//   first row of its scope's range  |  pos of its MemoryWritten
//
// a function of the log (rebuild reproduces it). A range's first row is
// (fnv1a64(scope_key) & kScopeMask) << kPosBits, except the global
// scope's, which is 0 (schema 13): every retrieval the compiler makes asks
// for the global scope beside its own, and FTS5 3.40.1 reaches a range
// only by stepping through every entry of a doclist before it, or, read
// backwards, by decoding each of its pages anew (bench_memory, 1M: the
// global scope's query cost a fifth more instructions read backwards from
// the upper part of the rowid space than forwards from 0, and more time).
// Two scopes whose ranges collide (a hash of 0 shares the global range)
// share a range; retrieval still checks every row's scope_key, so a
// collision costs time, never isolation.
#pragma once

#include <cstdint>
#include <string_view>

namespace ctxdb::memory {

inline constexpr int kPosBits = 40;                             // 1.1e12 events
inline constexpr uint64_t kScopeMask = (uint64_t(1) << 23) - 1; // rowids stay positive

// FNV-1a, 64 bits: small, fast and stable across platforms and versions
// (the ranges are stored in the file).
constexpr uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// The global scope's scope_key: the scope and its empty id, joined by
// \x1f as memories.scope_key is.
inline constexpr std::string_view kGlobalScopeKey = "global\x1f";

// The first rowid of the scope's range; the range is [first, first + 2^kPosBits).
constexpr int64_t scope_first_row(std::string_view scope_key) {
  if (scope_key == kGlobalScopeKey) return 0;
  return int64_t((fnv1a64(scope_key) & kScopeMask) << kPosBits);
}

constexpr int64_t scope_last_row(std::string_view scope_key) {
  return scope_first_row(scope_key) + ((int64_t(1) << kPosBits) - 1);
}

} // namespace ctxdb::memory
