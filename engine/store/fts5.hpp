// fts5.hpp — a connection's FTS5 API, for registering ctxdb's FTS5
// functions and tokenizers (memory/bm25.hpp, project/search_tokenizer.hpp).
#pragma once

#include <sqlite3.h>

namespace ctxdb::store {

// The connection's fts5_api, reached the way FTS5 documents (SELECT
// fts5(?1) with a pointer bound), or nullptr without FTS5.
inline fts5_api *fts5_api_of(sqlite3 *db) {
  fts5_api *api = nullptr;
  sqlite3_stmt *st = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, nullptr) != SQLITE_OK) return nullptr;
  sqlite3_bind_pointer(st, 1, &api, "fts5_api_ptr", nullptr);
  sqlite3_step(st);
  sqlite3_finalize(st);
  return api;
}

} // namespace ctxdb::store
