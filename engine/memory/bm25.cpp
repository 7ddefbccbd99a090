#include "memory/bm25.hpp"

#include "store/fts5.hpp"

#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace ctxdb::memory {

namespace {

// FTS5's constants (fts5_aux.c).
constexpr double kK1 = 1.2, kB = 0.75;

int count_row(const Fts5ExtensionApi *, Fts5Context *, void *rows) {
  ++*static_cast<sqlite3_int64 *>(rows);
  return SQLITE_OK;
}

// The statistics a connection keeps across retrievals (bm25.hpp): valid
// while memory_changes' count is `changes`.
struct Cache {
  bool valid = false;
  int64_t changes = -1;
  sqlite3_int64 rows = 0, tokens = 0;
  std::unordered_map<std::string, sqlite3_int64> hits; // per phrase key
};

// Phrases kept at most; past it the cache starts afresh.
constexpr size_t kMaxCachedPhrases = size_t(1) << 16;

// The cache when it may serve the statement's snapshot, emptied if
// memory_fts changed since it was filled; nullptr inside a write
// transaction, whose changes are not committed, or without the count.
Cache *usable(Cache *cache, sqlite3 *db, const Bm25Stats &s) {
  if (!cache || !s.changes || sqlite3_txn_state(db, "main") != SQLITE_TXN_READ) return nullptr;
  if (cache->changes != *s.changes || cache->hits.size() >= kMaxCachedPhrases) {
    cache->hits.clear();
    cache->valid = false;
    cache->changes = *s.changes;
  }
  return cache;
}

// The table's rows and tokens, from the cache when it holds them.
int count_totals(const Fts5ExtensionApi *api, Fts5Context *fts, Cache *cache, sqlite3_int64 &rows,
                 sqlite3_int64 &tokens) {
  if (cache && cache->valid) {
    rows = cache->rows;
    tokens = cache->tokens;
    return SQLITE_OK;
  }
  int rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc == SQLITE_OK && cache) {
    cache->rows = rows;
    cache->tokens = tokens;
    cache->valid = true;
  }
  return rc;
}

// The rows of the whole table that match phrase i, from the cache when it
// holds them (under `key`); `walked` counts the doclists walked instead.
int count_phrase(const Fts5ExtensionApi *api, Fts5Context *fts, int i, Cache *cache,
                 const std::string *key, sqlite3_int64 &hits, int64_t &walked) {
  if (cache && key)
    if (auto it = cache->hits.find(*key); it != cache->hits.end()) {
      hits = it->second;
      return SQLITE_OK;
    }
  hits = 0;
  ++walked;
  int rc = api->xQueryPhrase(fts, i, &hits, count_row);
  if (rc == SQLITE_OK && cache && key) cache->hits.emplace(*key, hits);
  return rc;
}

// What fts5Bm25GetData computes: the mean row length and, per phrase,
// log((N - n + 0.5) / (n + 0.5)) floored at 1e-6, n its matching rows.
int count_stats(const Fts5ExtensionApi *api, Fts5Context *fts, Cache *cache, Bm25Stats &s) {
  size_t phrases = size_t(api->xPhraseCount(fts));
  if (s.keys.empty() && !s.expression.empty())
    for (size_t i = 0; i < phrases; ++i) s.keys.push_back(s.expression + '\0' + std::to_string(i));
  bool keyed = s.keys.size() == phrases;
  sqlite3_int64 rows = 0, tokens = 0;
  int rc = count_totals(api, fts, cache, rows, tokens);
  if (rc != SQLITE_OK) return rc;
  s.avgdl = double(tokens) / double(rows);
  s.idf.assign(phrases, 0.0);
  s.freq.assign(phrases, 0.0);
  for (size_t i = 0; i < phrases; ++i) {
    sqlite3_int64 hits = 0;
    if ((rc = count_phrase(api, fts, int(i), cache, keyed ? &s.keys[i] : nullptr, hits,
                           s.walked)) != SQLITE_OK)
      return rc;
    double idf = std::log((rows - hits + 0.5) / (hits + 0.5));
    s.idf[i] = idf <= 0.0 ? 1e-6 : idf;
  }
  s.ready = true;
  return SQLITE_OK;
}

// The row's weighted hits per phrase. Each phrase's own position list is
// walked (xPhraseFirst/xPhraseNext), where xInst would first build and
// sort the row's instances of every phrase; bm25() sums the same weights
// (small integers, exact in any order), so the score is the same.
int count_hits(const Fts5ExtensionApi *api, Fts5Context *fts, int nargs, sqlite3_value **weights,
               Bm25Stats &s) {
  for (size_t i = 0; i < s.freq.size(); ++i) {
    Fts5PhraseIter it;
    int column = 0, offset = 0;
    double hits = 0.0;
    int rc = api->xPhraseFirst(fts, int(i), &it, &column, &offset);
    if (rc != SQLITE_OK) return rc;
    for (; column >= 0; api->xPhraseNext(fts, &it, &column, &offset))
      hits += nargs > column ? sqlite3_value_double(weights[column]) : 1.0;
    s.freq[i] = hits;
  }
  return SQLITE_OK;
}

// The row's length in tokens from its %_docsize record (one varint per
// column, as FTS5 writes it), as xColumnSize(-1) sums it; false when the
// record does not hold one varint per column.
bool sizes_sum(const unsigned char *p, int n, int columns, int &tokens) {
  int off = 0;
  tokens = 0;
  for (int c = 0; c < columns; ++c) {
    uint32_t v = 0;
    for (int i = 0;; ++i) {
      if (off >= n) return false;
      unsigned char b = p[off++];
      if (i == 8) {
        v = (v << 8) | b;
        break;
      }
      v = (v << 7) | (b & 0x7f);
      if (!(b & 0x80)) break;
    }
    tokens += int(v);
  }
  return off == n;
}

// The row's length: from the %_docsize record the query joined (sizes),
// or FTS5's own lookup of it when the argument is NULL.
int row_tokens(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_value *sizes, int &tokens) {
  if (sqlite3_value_type(sizes) == SQLITE_BLOB &&
      sizes_sum(static_cast<const unsigned char *>(sqlite3_value_blob(sizes)),
                sqlite3_value_bytes(sizes), api->xColumnCount(fts), tokens))
    return SQLITE_OK;
  return api->xColumnSize(fts, -1, &tokens);
}

void bm25(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nargs,
          sqlite3_value **args) {
  auto *s = nargs > 1 ? static_cast<Bm25Stats *>(sqlite3_value_pointer(args[0], kBm25StatsType))
                      : nullptr;
  if (!s) {
    sqlite3_result_error(ctx, "ctxdb_bm25: no statistics bound", -1);
    return;
  }
  int rc = SQLITE_OK;
  if (!s->ready || s->idf.size() != size_t(api->xPhraseCount(fts)))
    rc = count_stats(
        api, fts,
        usable(static_cast<Cache *>(api->xUserData(fts)), sqlite3_context_db_handle(ctx), *s), *s);
  if (rc == SQLITE_OK) rc = count_hits(api, fts, nargs - 2, args + 2, *s);
  int tokens = 0;
  if (rc == SQLITE_OK) rc = row_tokens(api, fts, args[1], tokens);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  double d = double(tokens), score = 0.0;
  for (size_t i = 0; i < s->idf.size(); ++i)
    score += s->idf[i] *
             ((s->freq[i] * (kK1 + 1.0)) / (s->freq[i] + kK1 * (1 - kB + kB * d / s->avgdl)));
  sqlite3_result_double(ctx, -1.0 * score);
}

} // namespace

void register_bm25(sqlite3 *db) {
  fts5_api *api = store::fts5_api_of(db);
  if (!api) return;
  // The connection's cache: FTS5 frees it with the connection, but not
  // when the registration fails.
  auto *cache = new Cache;
  if (api->xCreateFunction(api, "ctxdb_bm25", cache, bm25,
                           [](void *c) { delete static_cast<Cache *>(c); }) != SQLITE_OK)
    delete cache;
}

} // namespace ctxdb::memory
