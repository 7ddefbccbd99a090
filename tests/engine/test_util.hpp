// Helpers shared by the engine tests: a scratch directory per test.
#pragma once

#include "engine.hpp"
#include "error.hpp"
#include "store/store.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

namespace ctxdb::test {

class TempDir {
public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ctxdb-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string &name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

// The first bytes of an image file, its size in them: a big-endian 32-bit
// number, and the head of a PNG of w x h pixels (all an image's size is
// read from).
inline std::string be32(uint32_t v) {
  return {char(v >> 24), char(v >> 16 & 0xff), char(v >> 8 & 0xff), char(v & 0xff)};
}
inline std::string png_head(uint32_t w, uint32_t h) {
  return std::string("\x89PNG\r\n\x1a\n", 8) + be32(13) + "IHDR" + be32(w) + be32(h) +
         std::string("\x08\x06\0\0\0", 5) + be32(0);
}

// ctxdb_test_flip(blob, i): the blob with the lowest bit of byte i flipped.
inline void flip_bit(sqlite3_context *ctx, int, sqlite3_value **argv) {
  std::string b(static_cast<const char *>(sqlite3_value_blob(argv[0])),
                size_t(sqlite3_value_bytes(argv[0])));
  size_t i = size_t(sqlite3_value_int64(argv[1]));
  if (i < b.size()) b[i] ^= 1;
  sqlite3_result_blob(ctx, b.data(), int(b.size()), SQLITE_TRANSIENT);
}

// Runs SQL on the file through a second, raw connection (the tamperer).
inline void raw_sql(const std::string &path, const std::string &sql) {
  sqlite3 *db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  store::register_sql_functions(db); // ctxdb_zstd, ctxdb_unzstd
  sqlite3_create_function(db, "ctxdb_test_flip", 2, SQLITE_UTF8, nullptr, flip_bit, nullptr,
                          nullptr);
  char *err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  INFO(sql << ": " << (err ? err : ""));
  sqlite3_free(err);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

// SQL that takes a file back from schema 20 (import_sources).
inline const std::string kBeforeSchema20 = "DROP TABLE import_sources;";

// ... and from schema 19 (the instructions index, the search view of
// schema 11, stats' cancellations).
inline const std::string kBeforeSchema19 =
    kBeforeSchema20 +
    "DROP INDEX messages_instructions; DROP VIEW search_text;"
    "ALTER TABLE stats DROP COLUMN tool_cancellations;"
    "CREATE VIEW search_text (pos, text) AS SELECT pos, CASE type"
    " WHEN 'UserPromptSubmitted' THEN ifnull(payload ->> '$.text', '')"
    " WHEN 'BranchSummarized' THEN ifnull(payload ->> '$.text', '')"
    " WHEN 'AssistantMessageCreated' THEN ifnull((SELECT group_concat(trim(ifnull(b.value ->> "
    "'$.text', '') || ' ' || ifnull(b.value ->> '$.name', '') || ' ' || CASE json_type(b.value, "
    "'$.args') WHEN 'text' THEN b.value ->> '$.args' WHEN 'null' THEN '' ELSE ifnull(b.value -> "
    "'$.args', '') END), char(10)) FROM json_each(payload, '$.content') b), '')"
    " WHEN 'CompactionCompleted' THEN CASE json_type(payload, '$.summary') WHEN 'text' THEN "
    "payload ->> '$.summary' ELSE ifnull(payload -> '$.summary', '') END"
    " ELSE trim(ifnull(payload ->> '$.output', '') || char(10) || ifnull(payload ->> '$.error', "
    "''), char(10)) END FROM events WHERE type IN ('UserPromptSubmitted', "
    "'AssistantMessageCreated', 'ToolCallFinished', 'ToolCallFailed', 'CompactionCompleted', "
    "'BranchSummarized');";

// ... and from schema 18 (stats' reasoning and cost columns, token_calibration).
inline const std::string kBeforeSchema18 =
    kBeforeSchema19 +
    "ALTER TABLE stats DROP COLUMN usage_reasoning_tokens;"
    "ALTER TABLE stats DROP COLUMN cost_nano_usd;"
    "ALTER TABLE stats DROP COLUMN priced_messages; DROP TABLE token_calibration;";

// ... and from schema 17 (search_words tokenized by ctxdb_words), for
// raw_sql (whose connection has the tokenizer).
inline const std::string kBeforeSchema17 =
    kBeforeSchema18 + "DROP TABLE search_words;"
                      "CREATE VIRTUAL TABLE search_words USING fts5(text, content = 'search_text',"
                      " content_rowid = 'pos', tokenize = 'unicode61 remove_diacritics 2');"
                      "INSERT INTO search_words(rowid, text) SELECT pos, text FROM search_text"
                      " WHERE pos <= (SELECT pos FROM search_mark WHERE id = 1);";

// ... and from schema 16 (snapshots compressed; raw_sql's connection has
// ctxdb_unzstd).
inline const std::string kBeforeSchema16 =
    kBeforeSchema17 +
    "CREATE TABLE snapshots_text (branch_no INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " state TEXT NOT NULL);"
    "INSERT INTO snapshots_text SELECT branch_no, seq, ctxdb_unzstd(state) FROM state_snapshots;"
    "DROP TABLE state_snapshots; ALTER TABLE snapshots_text RENAME TO state_snapshots;"
    "CREATE UNIQUE INDEX state_snapshots_by_branch ON state_snapshots (branch_no, seq);";

// ... and from schema 15 (memory_changes and its triggers), for tests that
// take it back to an older schema still.
inline const std::string kBeforeSchema15 =
    kBeforeSchema16 +
    "DROP TRIGGER memory_rank_counted_insert; DROP TRIGGER memory_rank_counted_delete;"
    "DROP TRIGGER memory_rank_counted_update; DROP TABLE memory_changes;";

// The first column of the first row sql gives, read through a raw
// connection: fn(statement) when there is a row, otherwise `none`.
template <class T, class Fn>
T raw_value(const std::string &path, const std::string &sql, T none, Fn &&fn) {
  sqlite3 *db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt *st = nullptr;
  INFO(sql);
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  T v = sqlite3_step(st) == SQLITE_ROW ? fn(st) : none;
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

// One integer from the file (-1: no row).
inline int64_t raw_int(const std::string &path, const std::string &sql) {
  return raw_value(path, sql, int64_t(-1),
                   [](sqlite3_stmt *st) { return sqlite3_column_int64(st, 0); });
}

// One blob (or text) from the file, as bytes (empty: no row).
inline std::string raw_bytes(const std::string &path, const std::string &sql) {
  return raw_value(path, sql, std::string(), [](sqlite3_stmt *st) {
    return std::string(static_cast<const char *>(sqlite3_column_blob(st, 0)),
                       size_t(sqlite3_column_bytes(st, 0)));
  });
}

// The code fn() throws, or kOk.
template <class Fn> Code code_of(Fn &&fn) {
  try {
    fn();
    return Code::kOk;
  } catch (const Error &e) {
    return e.code();
  }
}

// The message of the error fn() throws; empty when it throws none.
template <class Fn> std::string message_of(Fn &&fn) {
  try {
    fn();
    return "";
  } catch (const Error &e) {
    return e.what();
  }
}

// A top-level field of a JSON object: a string's value, else its JSON.
inline std::string field(const std::string &json, const char *key) {
  simdjson::dom::parser p;
  simdjson::dom::element e = p.parse(json)[key];
  if (e.is_string()) return std::string(e.get_string().value());
  return simdjson::minify(e);
}

// Every stored event, in append order, as export gives them.
inline std::string export_all(Engine &db) {
  std::string out;
  int64_t cursor = 0;
  for (;;) {
    auto rows = db.events_page(std::nullopt, cursor, -1, 3); // small pages on purpose
    for (auto &r : rows) out += r + "\n";
    if (rows.size() < 3) return out;
  }
}

// Everything a database holds: the log, and each derived table's checksum
// (what rebuild reports as "before"; the rebuild itself changes nothing).
inline std::string snapshot(Engine &db) {
  std::string report = db.rebuild("");
  simdjson::dom::parser p;
  std::string out = export_all(db);
  for (simdjson::dom::element t : p.parse(report)["tables"].get_array()) {
    out += std::string(t["table"].get_string().value()) + "=";
    out += std::string(t["before"].get_string().value()) + "\n";
  }
  return out;
}

} // namespace ctxdb::test
