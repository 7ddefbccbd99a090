// The database file: identity checks, schema versions, config, read-only.
#include "engine.hpp"
#include "store/store.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <fstream>
#include <iterator>

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

} // namespace store_test
