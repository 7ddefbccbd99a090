// The database file: identity checks, schema versions, config, read-only,
// and the background checkpointer.
#include "engine.hpp"
#include "store/store.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <thread>

namespace store_test {

using namespace ctxdb;

namespace {

Code open_code(const std::string &path, const std::string &config = "",
               std::string *message = nullptr) {
  try {
    Engine db(path, config);
    return Code::kOk;
  } catch (const Error &e) {
    if (message) *message = e.what();
    return e.code();
  }
}

std::string read_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void raw_sql(const std::string &path, const char *sql) {
  sqlite3 *db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
}

} // namespace

TEST_CASE("a file that is not an SQLite database is refused and left untouched") {
  test::TempDir dir;
  std::string path = dir.file("notes.txt");
  std::ofstream(path) << std::string(8192, 'x');
  std::string before = read_file(path);
  CHECK(open_code(path) == Code::kNotADb);
  CHECK(read_file(path) == before);
}

TEST_CASE("an SQLite database of another application is refused and left untouched") {
  test::TempDir dir;
  std::string path = dir.file("other.db");
  raw_sql(path, "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
  std::string before = read_file(path);
  std::string message;
  CHECK(open_code(path, "", &message) == Code::kNotADb);
  CHECK(message.find("not a ctxdb") != std::string::npos);
  CHECK(read_file(path) == before);
}

TEST_CASE("a file from a newer ctxdb is refused with both versions named") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  { Engine db(path, ""); }
  int newer = store::schema_version() + 1;
  raw_sql(path, ("PRAGMA user_version = " + std::to_string(newer)).c_str());
  std::string message;
  CHECK(open_code(path, "", &message) == Code::kSchema);
  CHECK(message.find(std::to_string(newer)) != std::string::npos);
  CHECK(message.find("(" + std::to_string(store::schema_version()) + ")") != std::string::npos);
}

TEST_CASE("the file records its identity and schema version") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  { Engine db(path, R"({"durability":"full","busy_timeout_ms":100})"); }
  sqlite3 *db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt *q = nullptr;
  sqlite3_prepare_v2(
      db, "SELECT * FROM pragma_application_id, pragma_user_version, pragma_journal_mode", -1, &q,
      nullptr);
  REQUIRE(sqlite3_step(q) == SQLITE_ROW);
  CHECK(sqlite3_column_int(q, 0) == store::kApplicationId);
  CHECK(sqlite3_column_int(q, 1) == store::schema_version());
  CHECK(std::string(reinterpret_cast<const char *>(sqlite3_column_text(q, 2))) == "wal");
  sqlite3_finalize(q);
  sqlite3_close(db);
}

TEST_CASE("config is checked against its schema") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  std::string message;
  CHECK(open_code(path, R"({"durability":"bogus"})", &message) == Code::kInvalidArg);
  CHECK(message.find("durability") != std::string::npos);
  CHECK(open_code(path, R"({"busy_timeout_ms":-1})") == Code::kInvalidArg);
  CHECK(open_code(path, R"({"read_onyl":true})", &message) == Code::kInvalidArg);
  CHECK(message.find("read_onyl") != std::string::npos);
  CHECK(open_code(path, R"([1,2])") == Code::kInvalidArg);
  CHECK(open_code(path, R"({"durability":)") == Code::kInvalidJson);
  CHECK(open_code(path, R"({"durability":"normal"})") == Code::kOk);
  CHECK(open_code(path, R"({"mmap":"yes"})", &message) == Code::kInvalidArg);
  CHECK(message.find("mmap") != std::string::npos);
  CHECK(open_code(path, R"({"checkpoint":"later"})", &message) == Code::kInvalidArg);
  CHECK(message.find("checkpoint") != std::string::npos);
}

TEST_CASE("the file is read through a memory map unless the config says not to") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  auto mmap_size = [](store::Store &s) { return s.db().execAndGet("PRAGMA mmap_size").getInt64(); };
  {
    store::Store mapped(path, store::parse_config(""));
    CHECK(mmap_size(mapped) > 0);
  }
  store::Store unmapped(path, store::parse_config(R"({"mmap":false})"));
  CHECK(mmap_size(unmapped) == 0);
}

TEST_CASE("a read-only handle reads and refuses writes") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  CHECK(open_code(path, R"({"read_only":true})") != Code::kOk); // no file yet
  {
    Engine db(path, "");
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  }
  Engine ro(path, R"({"read_only":true})");
  CHECK(ro.session_get("s").find("\"id\":\"s\"") != std::string::npos);
  try {
    ro.append("s", R"({"type":"X","actor":"a","payload":{}})");
    FAIL("append on a read-only handle");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kReadOnly);
  }
}

// The WAL header's checkpoint sequence number (big-endian, bytes 12..15):
// SQLite increments it each time a write starts the WAL over from its
// beginning, which it does only once every frame was copied into the file.
uint32_t wal_restarts(const std::string &path) {
  std::string h = read_file(path + "-wal");
  REQUIRE(h.size() >= 32);
  auto b = [&](size_t i) { return uint32_t(static_cast<unsigned char>(h[i])); };
  return b(12) << 24 | b(13) << 16 | b(14) << 8 | b(15);
}

// One transaction of `pages` 4 KiB rows: about that many WAL frames.
void write_pages(store::Store &s, int pages) {
  s.db().exec("CREATE TABLE IF NOT EXISTS filler(b BLOB)");
  s.db().exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<" +
              std::to_string(pages) + ") INSERT INTO filler SELECT randomblob(4000) FROM n");
}

TEST_CASE("a writable handle checkpoints on a thread of its own, by default with durability "
          "normal only") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  { store::Store created(path, store::parse_config("")); }
  CHECK(store::Store(path, store::parse_config("")).checkpointer() != nullptr);
  CHECK(store::Store(path, store::parse_config(R"({"durability":"full"})")).checkpointer() ==
        nullptr);
  CHECK(
      store::Store(path, store::parse_config(R"({"durability":"full","checkpoint":"background"})"))
          .checkpointer() != nullptr);
  CHECK(store::Store(path, store::parse_config(R"({"checkpoint":"inline"})")).checkpointer() ==
        nullptr);
  CHECK(store::Store(path, store::parse_config(R"({"read_only":true})")).checkpointer() == nullptr);
}

TEST_CASE("a commit that fills the WAL wakes the checkpointer, and the WAL then starts over") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  store::Store s(path, store::parse_config(""));
  REQUIRE(s.checkpointer() != nullptr);
  write_pages(s, 10); // below the threshold: nothing to do
  uint32_t restarts = wal_restarts(path);
  CHECK(s.checkpointer()->passes() == 0);

  write_pages(s, store::Checkpointer::kFrames + 200);
  // The pass runs on the other thread; a loaded machine may take a while.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (s.checkpointer()->passes() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  REQUIRE(s.checkpointer()->passes() == 1);
  // Everything was copied, so the next write starts the WAL over.
  write_pages(s, 1);
  CHECK(wal_restarts(path) == restarts + 1);
  CHECK(s.db().execAndGet("SELECT count(*) FROM filler").getInt64() ==
        10 + store::Checkpointer::kFrames + 200 + 1);
}

TEST_CASE("a commit that leaves the WAL far past the threshold checkpoints in the writer's call") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  store::Store s(path, store::parse_config(""));
  REQUIRE(s.checkpointer() != nullptr);
  write_pages(s, 1);
  uint32_t restarts = wal_restarts(path);
  write_pages(s, store::Checkpointer::kInlineFrames);
  // Copied before the commit returned: the thread was not asked to.
  CHECK(s.checkpointer()->passes() == 0);
  write_pages(s, 1);
  CHECK(wal_restarts(path) == restarts + 1);
}

TEST_CASE("truncate_wal empties the WAL even while the checkpointer thread is at work") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  store::Store s(path, store::parse_config(""));
  REQUIRE(s.checkpointer() != nullptr);
  // Each commit wakes the thread, whose pass is still running when the
  // truncation comes: SQLite would answer it SQLITE_BUSY at once had the
  // two not taken turns (a purge then left its old pages in the WAL).
  for (int round = 0; round < 12; ++round) {
    write_pages(s, store::Checkpointer::kFrames + 100);
    CHECK(s.truncate_wal());
    CHECK(std::filesystem::file_size(path + "-wal") == 0);
  }
}

} // namespace store_test
