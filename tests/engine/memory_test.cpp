// Memories (DESIGN §7): writes, versions, retrieval, forgetting and the
// privacy purge; invariants 10 and 11.
#include "agent_events.hpp"
#include "engine.hpp"
#include "memory/bm25.hpp"
#include "memory/retrieve.hpp"
#include "memory/scope_rows.hpp"
#include "memory/search_text.hpp"
#include "memory_db.hpp"
#include "store/embedded_files.hpp"
#include "store/fts_merge.hpp"
#include "test_util.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>
#include <fstream>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memory_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

// memory_db.hpp's, with the calls these tests make.
struct MemoryDb : test::MemoryDb {
  std::string retrieve(const std::string &query, const std::string &more = "",
                       const std::string &scopes = R"([{"scope":"project","id":"p1"}])") {
    return db.memory_retrieve(R"({"query":")" + query + R"(","scopes":)" + scopes + R"(,"now":)" +
                              std::to_string(kT0 + kDay) + more + "}");
  }
  std::vector<std::string> found(const std::string &query, const std::string &more = "",
                                 const std::string &scopes = R"([{"scope":"project","id":"p1"}])") {
    return column(field(retrieve(query, more, scopes), "memories"), "memory_id");
  }
};

using Ids = std::vector<std::string>;

// raw_sql's status, for SQL that must fail.
int raw_rc(const std::string &path, const std::string &sql) {
  sqlite3 *db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return rc;
}

} // namespace

TEST_CASE("DESIGN §11 invariant 10: every memory write has source refs") {
  MemoryDb m;
  std::string before = snapshot(m.db);
  auto write = [&](const std::string &json) {
    return message_of([&] { m.db.memory_write("s", json); });
  };
  CHECK(write(R"({"scope":"session","content":"x"})").find("source_refs") != std::string::npos);
  CHECK(write(R"({"scope":"session","content":"x","source_refs":[]})").find("source_refs") !=
        std::string::npos);
  CHECK(code_of([&] {
          m.db.memory_write("s", R"({"scope":"session","content":"x","source_refs":["evt_nope"]})");
        }) == Code::kNotFound);
  // A raw append is held to the same rule: the projection checks it.
  CHECK(code_of([&] {
          m.db.append("s", R"({"type":"MemoryWritten","actor":"host","payload":{"memory_id":"m1",)"
                           R"("scope":"session","content":"x","source_refs":[]}})");
        }) == Code::kInvalidArg);
  // An update is a write too: it brings its own evidence.
  m.put("m1", "tabs not spaces");
  std::string with_m1 = snapshot(m.db);
  CHECK(code_of([&] { m.db.memory_update("m1", R"({"content":"spaces","source_refs":[]})"); }) ==
        Code::kInvalidArg);
  CHECK(snapshot(m.db) == with_m1);
  CHECK(before != with_m1);
  CHECK(field(m.db.memory_get("m1"), "source_refs") == R"(["evt_src"])");
}

TEST_CASE("DESIGN §11 invariant 11: every long-term memory has a scope and an expiry or update "
          "policy") {
  MemoryDb m;
  std::string before = snapshot(m.db);
  auto write = [&](const std::string &fields) {
    return message_of([&] {
      m.db.memory_write("s", R"({"content":"x","source_refs":["evt_src"],)" + fields + "}");
    });
  };
  for (const char *scope : {"global", "user", "org", "workspace", "project"}) {
    std::string id = std::string(scope) == "global" ? "" : R"(,"scope_id":"i")";
    CAPTURE(scope);
    CHECK(write(R"("scope":")" + std::string(scope) + "\"" + id).find("invariant 11") !=
          std::string::npos);
  }
  CHECK(write(R"("update_policy":"manual")").find("scope") != std::string::npos);      // no scope
  CHECK(write(R"("scope":"team","scope_id":"t")").find("scope") != std::string::npos); // unknown
  CHECK(write(R"("scope":"project","update_policy":"manual")").find("scope_id") !=
        std::string::npos);
  CHECK(write(R"("scope":"session","confidence":1.5)").find("confidence") != std::string::npos);
  CHECK(write(R"("scope":"session","confidence":-0.1)").find("confidence") != std::string::npos);
  CHECK(
      write(R"("scope":"project","scope_id":"p","ts":2000,"expires_at":1000)").find("expires_at") !=
      std::string::npos);
  CHECK(write(R"("scope":"project","scope_id":"p","expires_at":1,"ttl_ms":5)").find("ttl_ms") !=
        std::string::npos);
  CHECK(snapshot(m.db) == before); // every rejected write left the file as it was

  // Session memories end with their session; the others need one of the three.
  CHECK(field(m.db.memory_write("s",
                                R"({"scope":"session","content":"a","source_refs":["evt_src"]})"),
              "scope_id") == "s");
  std::string ttl = m.db.memory_write(
      "s",
      R"({"scope":"user","scope_id":"u","content":"b","source_refs":["evt_src"],"ttl_ms":1000,"ts":5000})");
  CHECK(field(ttl, "expires_at") == "6000"); // from the event's ts, not the clock
  for (const std::string &mem : items(m.db.memory_list(R"({"all_versions":true})"))) {
    std::string scope = field(mem, "scope");
    CHECK(!scope.empty());
    if (scope != "session")
      CHECK((field(mem, "expires_at") != "null" || field(mem, "update_policy") != "null"));
  }
}

TEST_CASE("memory: a project's memory is never retrieved for another project") {
  MemoryDb m;
  m.put("a1", "deploy with the blue pipeline");
  m.db.memory_write("s", R"({"memory_id":"b1","scope":"project","scope_id":"p2","content":)"
                         R"("deploy with the green pipeline","source_refs":["evt_src"],)"
                         R"("update_policy":"manual","ts":1700000000000})");
  m.db.memory_write("s",
                    R"({"memory_id":"g1","scope":"global","content":"deploy on weekdays",)"
                    R"("source_refs":["evt_src"],"update_policy":"manual","ts":1700000000000})");
  CHECK(m.found("deploy pipeline") == Ids{"a1"});
  CHECK(m.found("green") == Ids{});
  CHECK(m.found("deploy", "", R"([{"scope":"project","id":"p2"}])") == Ids{"b1"});
  Ids both = m.found("deploy", "", R"([{"scope":"project","id":"p1"},{"scope":"global"}])");
  std::sort(both.begin(), both.end());
  CHECK(both == Ids{"a1", "g1"});
  // No text: every memory of the scopes, by priority; still only those.
  CHECK(m.found("", "", R"([{"scope":"project","id":"p2"}])") == Ids{"b1"});
  CHECK(code_of([&] { m.found("x", "", R"([{"scope":"project"}])"); }) == Code::kInvalidArg);
}

TEST_CASE("memory: an update supersedes, the old version stays and answers 'as of'") {
  MemoryDb m;
  m.put("m1", "the API base is v1", "", 0);
  std::string v2 = m.db.memory_update(
      "m1", R"({"content":"the API base is v2","source_refs":["evt_src"],"ts":)" +
                std::to_string(kT0 + 1000) + "}");
  CHECK(field(v2, "version") == "2");
  CHECK(field(v2, "status") == "current");
  std::vector<std::string> all = items(m.db.memory_list(R"({"all_versions":true})"));
  REQUIRE(all.size() == 2);
  CHECK(field(all[0], "content") == "the API base is v1");
  CHECK(field(all[0], "status") == "superseded");
  CHECK(field(all[0], "valid_to") == std::to_string(kT0 + 1000));
  CHECK(field(all[0], "ended_by") == field(v2, "event_id"));
  auto as_of = [&](int64_t at) {
    return column(m.db.memory_list(R"({"as_of":)" + std::to_string(kT0 + at) + "}"), "content");
  };
  CHECK(as_of(500) == Ids{"the API base is v1"});
  CHECK(as_of(1000) == Ids{"the API base is v2"});
  CHECK(as_of(-1) == Ids{});
  CHECK(column(m.db.memory_list(""), "content") == Ids{"the API base is v2"});
  // Retrieval reads the current version only.
  CHECK(m.found("v1") == Ids{});
  CHECK(m.found("v2") == Ids{"m1"});
  CHECK(code_of([&] {
          m.db.memory_update("m1", R"({"content":"x","source_refs":["evt_src"],"scope":"user"})");
        }) == Code::kInvalidArg);
  CHECK(code_of([&] { m.db.memory_update("nope", R"({"source_refs":["evt_src"]})"); }) ==
        Code::kNotFound);
}

TEST_CASE("memory: expired memories are never retrieved") {
  MemoryDb m;
  m.put("short", "the staging password rotates", R"(,"ttl_ms":3600000)"); // an hour
  m.put("long", "the staging host is stg1", R"(,"expires_at":)" + std::to_string(kT0 + 3 * kDay));
  auto at = [&](int64_t now) {
    std::string q = R"({"query":"staging","scopes":[{"scope":"project","id":"p1"}],"now":)" +
                    std::to_string(now) + "}";
    Ids ids = column(field(m.db.memory_retrieve(q), "memories"), "memory_id");
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  CHECK(at(kT0 + 1000) == Ids{"long", "short"});
  CHECK(at(kT0 + 3600000) == Ids{"long"}); // expires_at itself is expired
  CHECK(at(kT0 + 3 * kDay) == Ids{});
  CHECK(at(kT0 - 1) == Ids{}); // not valid yet
  // Without text, the same filter.
  std::string q =
      R"({"scopes":[{"scope":"project","id":"p1"}],"now":)" + std::to_string(kT0 + 2 * kDay) + "}";
  CHECK(column(field(m.db.memory_retrieve(q), "memories"), "memory_id") == Ids{"long"});
}

TEST_CASE("memory: readers and sensitivity filter retrieval") {
  MemoryDb m;
  m.put("open", "the build cache lives in s3");
  m.put("coder", "the build token is in vault", R"(,"readers":["coder"])");
  m.put("secret", "the build server root key", R"(,"sensitive":true)");
  auto sorted = [](Ids ids) {
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  CHECK(sorted(m.found("build")) == Ids{"open"});
  CHECK(sorted(m.found("build", R"(,"agent":"coder")")) == Ids{"coder", "open"});
  CHECK(sorted(m.found("build", R"(,"agent":"reviewer")")) == Ids{"open"});
  CHECK(sorted(m.found("build", R"(,"allow_sensitive":true)")) == Ids{"open", "secret"});
}

TEST_CASE("memory: ranking blends text, priority, confidence and recency; the budget fits") {
  MemoryDb m;
  m.put("low", "use pnpm for installs", R"(,"priority":0,"confidence":0.2)");
  m.put("high", "use pnpm for installs", R"(,"priority":100,"confidence":1)");
  CHECK(m.found("pnpm installs") == Ids{"high", "low"});
  std::string r = m.retrieve("pnpm");
  std::vector<std::string> mems = items(field(r, "memories"));
  REQUIRE(mems.size() == 2);
  CHECK(field(mems[0], "source_refs") == R"(["evt_src"])");
  CHECK(field(mems[0], "kind") == "fact");
  CHECK(std::stod(field(mems[0], "score")) > std::stod(field(mems[1], "score")));
  // A budget of one memory's tokens: the second is excluded for it.
  int64_t tokens = std::stoll(field(mems[0], "tokens"));
  std::string fitted = m.retrieve("pnpm", R"(,"budget":)" + std::to_string(tokens));
  CHECK(column(field(fitted, "memories"), "memory_id") == Ids{"high"});
  CHECK(column(field(fitted, "excluded"), "reason") == Ids{"budget"});
  CHECK(field(fitted, "used_tokens") == std::to_string(tokens));
  CHECK(m.found("pnpm", R"(,"limit":1)") == Ids{"high"});
  // The same inputs give the same output, byte for byte.
  CHECK(m.retrieve("pnpm", R"(,"record_usage":false)") ==
        m.retrieve("pnpm", R"(,"record_usage":false)"));
}

TEST_CASE("memory: a query that is not FTS5 syntax is plain words, never an error") {
  MemoryDb m;
  m.put("m1", "retry the flaky test with --repeat");
  for (const char *q : {"AND flaky", "\\\"unbalanced", "flaky)", "col:flaky", "NEAR(", "*", "-",
                        "flaky OR", "^", "'"}) {
    CAPTURE(q);
    for (const char *mode : {"any", "all", "fts"}) {
      CAPTURE(mode);
      CHECK(code_of([&] { m.retrieve(q, R"(,"match":")" + std::string(mode) + "\""); }) ==
            Code::kOk);
    }
  }
  std::string r = m.retrieve("flaky AND NOT", R"(,"match":"fts")");
  CHECK(field(r, "fell_back") == "true");
  CHECK(column(field(r, "memories"), "memory_id") == Ids{"m1"});
  // Valid syntax is used as such.
  CHECK(field(m.retrieve("flaky NOT repeat", R"(,"match":"fts")"), "fell_back") == "false");
  CHECK(m.found("flaky NOT repeat", R"(,"match":"fts")") == Ids{});
  CHECK(m.found("flak*", R"(,"match":"fts")") == Ids{"m1"});
  CHECK(m.found("flaky missing", R"(,"match":"all")") == Ids{});
  CHECK(m.found("flaky missing") == Ids{"m1"});
}

TEST_CASE("memory: CJK content is found by any word in it") {
  MemoryDb m;
  m.put("zh", "数据库迁移必须先备份生产环境");
  m.put("ja", "テストは必ずローカルで実行してください");
  m.put("ko", "배포 전에 반드시 리뷰를 받으세요");
  m.put("mix", "使用pnpm安装依赖");
  CHECK(m.found("数据库") == Ids{"zh"});
  CHECK(m.found("备份") == Ids{"zh"}); // two characters
  CHECK(m.found("产") == Ids{"zh"});   // one
  CHECK(m.found("生产环境 备份") == Ids{"zh"});
  CHECK(m.found("库迁移必") == Ids{"zh"}); // across word boundaries: a substring
  CHECK(m.found("数据备份") == Ids{});     // not a substring
  CHECK(m.found("ローカル") == Ids{"ja"});
  CHECK(m.found("리뷰") == Ids{"ko"});
  CHECK(m.found("pnpm") == Ids{"mix"});
  CHECK(m.found("安装") == Ids{"mix"});
  CHECK(m.found("\\\"备份\\\"", R"(,"match":"fts")") == Ids{"zh"});
  CHECK(m.found("备份 OR 安装", R"(,"match":"fts")").size() == 2);
  CHECK(memory::index_text("ab数据c") == "ab 数 据 c");
  CHECK(memory::words_query("the 数据 café", false) == R"("数 据" OR "café")");
}

TEST_CASE("memory: retrieval counts use, outside the derived tables") {
  MemoryDb m;
  m.put("m1", "prefer rebase over merge");
  CHECK(field(m.db.memory_get("m1"), "use_count") == "0");
  m.retrieve("rebase");
  m.retrieve("rebase");
  m.retrieve("rebase", R"(,"record_usage":false)");
  std::string got = m.db.memory_get("m1");
  CHECK(field(got, "use_count") == "2");
  CHECK(field(got, "last_used") == std::to_string(kT0 + kDay));
  // Usage is not a function of the log: rebuild neither checks nor clears it.
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
  CHECK(field(m.db.memory_get("m1"), "use_count") == "2");
}

TEST_CASE("memory: tombstone removes the content from the projection and the index") {
  MemoryDb m;
  m.put("m1", "the wifi password is hunter2");
  m.db.memory_update("m1",
                     R"({"content":"the wifi password is hunter3","source_refs":["evt_src"]})");
  std::string r = m.db.memory_forget("m1", R"({"reason":"asked to forget"})");
  CHECK(field(r, "mode") == "tombstone");
  CHECK(m.found("wifi") == Ids{});
  CHECK(field(m.db.memory_get("m1"), "content") == "null");
  CHECK(field(m.db.memory_get("m1"), "status") == "forgotten");
  for (const std::string &v : items(m.db.memory_list(R"({"all_versions":true})")))
    CHECK(field(v, "content") == "null");
  CHECK(column(m.db.memory_list(""), "memory_id") == Ids{});
  CHECK(export_all(m.db).find("hunter2") != std::string::npos); // the events remain
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
  CHECK(code_of([&] { m.db.memory_forget("m1", ""); }) == Code::kConflict);
  CHECK(code_of([&] {
          m.db.memory_update("m1", R"({"content":"x","source_refs":["evt_src"]})");
        }) == Code::kConflict);
  CHECK(code_of([&] { m.put("m1", "again"); }) == Code::kConflict);
  CHECK(code_of([&] { m.db.memory_forget("nope", ""); }) == Code::kNotFound);
}

TEST_CASE("memory: purge removes the content from the log and verify stays green") {
  MemoryDb m;
  m.put("keep", "the office opens at nine");
  m.put("m1", "my card number is 4111-1111");
  m.db.memory_update("m1",
                     R"({"content":"my card number is 4111-2222","source_refs":["evt_src"]})");
  m.db.memory_forget("m1", ""); // a tombstone first: its event is purged too
  std::string r = m.db.memory_forget("m1", R"({"mode":"purge"})");
  std::vector<std::string> purged = items(field(r, "purged_event_ids"));
  for (std::string &id : purged) id = id.substr(1, id.size() - 2); // JSON strings
  CHECK(purged.size() == 3);
  std::string log = export_all(m.db);
  // The whole numbers: "4111" alone can occur in a random id or hash.
  CHECK(log.find("4111-1111") == std::string::npos);
  CHECK(log.find("4111-2222") == std::string::npos);
  CHECK(log.find("\"payload\":null") != std::string::npos);
  std::string v = m.db.verify(std::nullopt);
  CHECK(field(v, "ok") == "true");
  CHECK(column(field(v, "purged"), "purged_by") == Ids(3, field(r, "event_id")));
  CHECK(code_of([&] { m.db.memory_get("m1"); }) == Code::kNotFound);
  CHECK(column(m.db.memory_list(R"({"all_versions":true})"), "memory_id") == Ids{"keep"});
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
  CHECK(m.found("office") == Ids{"keep"});
  CHECK(code_of([&] { m.db.memory_forget("m1", R"({"mode":"purge"})"); }) == Code::kConflict);

  // The log stays append-only: only a purge record lets a payload go, and
  // nothing else of an event may change.
  CHECK(raw_rc(m.path, "UPDATE events SET payload=NULL WHERE id='evt_src'") != SQLITE_OK);
  CHECK(raw_rc(m.path, "UPDATE events SET ts=1 WHERE id='" + purged[0] + "'") != SQLITE_OK);
  CHECK(raw_rc(m.path, "DELETE FROM events WHERE id='" + purged[0] + "'") != SQLITE_OK);

  // An export of the purged log imports whole: same chain, same purge.
  TempDir other;
  Engine copy(other.file("copy.ctxdb"), "");
  CHECK(field(copy.import(log), "imported") ==
        std::to_string(items("[" +
                             [&] {
                               std::string rows = log;
                               for (size_t i = 0; (i = rows.find('\n', i)) != std::string::npos;)
                                 rows.replace(i, 1, ",");
                               return rows.substr(0, rows.size() - 1);
                             }() +
                             "]")
                           .size()));
  CHECK(export_all(copy) == log);
  CHECK(field(copy.verify(std::nullopt), "ok") == "true");
  CHECK(field(copy.verify(std::nullopt), "purged") == field(v, "purged"));
  CHECK(column(copy.memory_list(""), "memory_id") == Ids{"keep"});
  CHECK(code_of([&] { copy.memory_get("m1"); }) == Code::kNotFound);
}

// The bytes of a file, folded to lower case (FTS5 stores terms folded).
std::string lowered_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char &c : bytes) c = char(std::tolower(static_cast<unsigned char>(c)));
  return bytes;
}

// Neither the file nor its WAL holds m1's contents or keyword (below).
void check_no_secret(const std::string &path) {
  for (const std::string &file : {path, path + "-wal"}) {
    std::string bytes = lowered_file(file);
    CHECK(bytes.find("zebraquokka42") == std::string::npos);
    CHECK(bytes.find("zebraquokka43") == std::string::npos);
    CHECK(bytes.find("quokkasecret") == std::string::npos);
  }
}

TEST_CASE("memory: a purge leaves no byte of the content in the file or its WAL") {
  MemoryDb m;
  m.put("m1", "the deploy key is zebraquokka42", R"(,"keywords":["quokkasecret"])");
  m.db.memory_update("m1",
                     R"({"content":"the deploy key is zebraquokka43","source_refs":["evt_src"]})");
  for (int i = 0; i < 40; ++i) m.put("f" + std::to_string(i), "filler fact " + std::to_string(i));
  // Before: in the log, the tables and the index terms.
  CHECK(lowered_file(m.path + "-wal").find("zebraquokka42") != std::string::npos);
  m.db.memory_forget("m1", R"({"mode":"purge"})");
  check_no_secret(m.path);
  // The others are still found, and the database is whole.
  CHECK(m.found("filler").size() == 20); // top 20 of 40
  CHECK(field(m.db.verify(std::nullopt), "ok") == "true");
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("memory: a purge after an earlier purge on the same handle leaves no byte either") {
  // Space freed before the purge (the superseded version's rows, merged
  // index segments) must have been zeroed when it was freed: a purge
  // cannot find it afterwards. An earlier purge must not have turned that
  // off for the rest of the handle's life.
  MemoryDb m;
  m.put("first", "an earlier secret");
  m.db.memory_forget("first", R"({"mode":"purge"})");
  m.put("m1", "the deploy key is zebraquokka42", R"(,"keywords":["quokkasecret"])");
  m.db.memory_update("m1",
                     R"({"content":"the deploy key is zebraquokka43","source_refs":["evt_src"]})");
  for (int i = 0; i < 40; ++i) m.put("f" + std::to_string(i), "filler fact " + std::to_string(i));
  m.db.memory_forget("m1", R"({"mode":"purge"})");
  check_no_secret(m.path);
}

// SQLite 3.40.1's FTS5 grows an index's structure by about two empty
// levels per 'optimize' once it spans more than a page, and calls it
// corrupt past 2000: the purger must not let a long run of purges get
// there (memory/purger.cpp, kMaxLevels).
TEST_CASE("memory: a long run of purges keeps memory_fts sound and bounded") {
  MemoryDb m;
  for (int i = 0; i < 200; ++i)
    m.put("f" + std::to_string(i), "filler fact number " + std::to_string(i) +
                                       " about the build cache and the deploy pipeline");
  auto levels = [&] {
    store::Store s(m.path, store::parse_config(R"({"read_only":true})"));
    return store::fts_shape(s, "memory_fts").levels;
  };
  int64_t most = 0;
  for (int i = 0; i < 120; ++i) {
    std::string id = "p" + std::to_string(i);
    m.put(id, "secret" + std::to_string(i) + "zz of the day");
    m.db.memory_forget(id, R"({"mode":"purge"})");
    most = std::max(most, levels());
  }
  CHECK(most <= 70); // 64, and the two levels an optimize adds
  for (const std::string &file : {m.path, m.path + "-wal"}) {
    std::string bytes = lowered_file(file);
    for (int i : {0, 60, 119})
      CHECK(bytes.find("secret" + std::to_string(i) + "zz") == std::string::npos);
  }
  CHECK(raw_rc(m.path, "INSERT INTO memory_fts(memory_fts) VALUES('integrity-check')") ==
        SQLITE_OK);
  CHECK(m.found("filler").size() == 20);
  m.put("after", "written after the purges");
  CHECK(m.found("written") == Ids{"after"});
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("memory: a removed payload without a purge record breaks verify") {
  MemoryDb m;
  m.put("m1", "x marks the spot");
  std::string id = field(m.db.memory_get("m1"), "event_id");
  // Tampering around the trigger: a record, the payload, then no record.
  raw_sql(m.path, "INSERT INTO purges VALUES('" + id +
                      "','evt_fake');"
                      "UPDATE events SET payload=NULL WHERE id='" +
                      id +
                      "';"
                      "DELETE FROM purges;");
  std::string v = m.db.verify(std::nullopt);
  CHECK(field(v, "ok") == "false");
  CHECK(field(field(v, "first_broken"), "event_id") == id);
}

TEST_CASE("memory: a purge lists exactly the memory's events") {
  MemoryDb m;
  m.put("m1", "one");
  m.put("m2", "two");
  std::string e1 = field(m.db.memory_get("m1"), "event_id");
  std::string e2 = field(m.db.memory_get("m2"), "event_id");
  std::string before = snapshot(m.db);
  // Each listed event with its payload hash, as a purge proves it.
  auto purge = [&](const Ids &ids) {
    std::string listed, proofs;
    for (const std::string &id : ids) {
      std::string sep = listed.empty() ? "" : ",";
      listed += sep + "\"" + id + "\"";
      proofs += sep + R"({"event_id":")" + id + R"(","payload_hash":")" +
                field(m.db.event_get(id), "payload_hash") + R"("})";
    }
    return code_of([&] {
      m.db.append("s", R"({"type":"MemoryDeleted","actor":"host","payload":{"memory_id":"m1",)"
                       R"("mode":"purge","purged_event_ids":[)" +
                           listed + R"(],"purged":[)" + proofs + "]}}");
    });
  };
  CHECK(purge({}) == Code::kInvalidArg);
  CHECK(purge({e2}) == Code::kInvalidArg);
  CHECK(purge({e1, e2}) == Code::kInvalidArg);
  CHECK(purge({"evt_src"}) == Code::kInvalidArg);
  CHECK(snapshot(m.db) == before);
  CHECK(purge({e1}) == Code::kOk);
  CHECK(field(m.db.verify(std::nullopt), "ok") == "true");
}

TEST_CASE("memory: promote writes a plan's candidates in one transaction") {
  MemoryDb m;
  std::string before = snapshot(m.db);
  std::string bad =
      R"([{"scope":"session","content":"a","source_refs":["evt_src"]},)"
      R"({"scope":"project","scope_id":"p1","content":"b","source_refs":["evt_src"]}])";
  std::string msg = message_of([&] { m.db.memory_promote("s", bad); });
  CHECK(msg.find("invariant 11") != std::string::npos);
  CHECK(snapshot(m.db) == before); // the first candidate was not written either
  CHECK(message_of([&] {
          m.db.memory_promote("s", R"([{"scope":"session","content":"a","source_refs":[]}])");
        }).find("line 1: MemoryWritten") != std::string::npos);
  std::string ok = R"([{"scope":"session","content":"a","source_refs":["evt_src"]},)"
                   R"({"scope":"project","scope_id":"p1","content":"b","source_refs":["evt_src"],)"
                   R"("update_policy":"manual","kind":"decision"}])";
  std::vector<std::string> written = items(m.db.memory_promote("s", ok));
  REQUIRE(written.size() == 2);
  CHECK(field(written[1], "kind") == "decision");
  CHECK(field(written[0], "memory_id").starts_with("mem_"));
  CHECK(m.db.memory_promote("s", "[]") == "[]");
  CHECK(code_of([&] { m.db.memory_promote("s", "{}"); }) == Code::kInvalidArg);
}

TEST_CASE("memory: rebuild --check gives back the memory tables and the search index") {
  MemoryDb m;
  for (int i = 0; i < 40; ++i)
    m.put("m" + std::to_string(i), "note " + std::to_string(i) + " about 项目 builds",
          R"(,"keywords":["k)" + std::to_string(i % 3) + "\"]", i);
  for (int i = 0; i < 40; i += 3)
    m.db.memory_update("m" + std::to_string(i),
                       R"({"content":"revised note about builds","source_refs":["evt_src"]})");
  for (int i = 1; i < 40; i += 7) m.db.memory_forget("m" + std::to_string(i), "");
  m.db.memory_forget("m2", R"({"mode":"purge"})");
  m.retrieve("builds");
  std::string before = m.retrieve("builds 项目 k1", R"(,"limit":50,"record_usage":false)");
  std::string report = m.db.rebuild(R"({"check":true})");
  CHECK(field(report, "identical") == "true");
  CHECK(m.retrieve("builds 项目 k1", R"(,"limit":50,"record_usage":false)") == before);
  // The FTS index agrees with its content table.
  raw_sql(m.path, "INSERT INTO memory_fts(memory_fts, rank) VALUES('integrity-check', 1)");
}

TEST_CASE("memory: the engine-level retrieve for the compiler") {
  MemoryDb m;
  m.put("m1", "run the linter before commit", R"(,"priority":90)");
  memory::Query q;
  q.text = "linter commit";
  q.scopes = {{"project", "p1"}};
  q.now = kT0 + kDay;
  q.budget = 100;
  store::Store store(m.path, {});
  memory::Retrieval r = memory::retrieve(store, q, token::default_counter());
  REQUIRE(r.included.size() == 1);
  CHECK(r.included[0].memory_id == "m1");
  CHECK(r.included[0].source_refs == Ids{"evt_src"});
  CHECK(r.included[0].tokens > 0);
  CHECK(r.used_tokens == r.included[0].tokens);
}

TEST_CASE("memory: outputs match their schemas") {
  MemoryDb m;
  auto matches = [](const std::string &json, const char *schema) {
    INFO(schema << ": " << json);
    simdjson::dom::parser p;
    CHECK_NOTHROW(store::embedded_schema(std::string("json/") + schema)
                      .validate(json::parse(p, json, "output"), ""));
  };
  matches(m.put("m1", "a note", R"(,"readers":["x"],"keywords":["k"])"), "memory.schema.json");
  matches(m.db.memory_update("m1", R"({"confidence":0.25,"source_refs":["evt_src"]})"),
          "memory.schema.json");
  for (const std::string &v : items(m.db.memory_list(R"({"all_versions":true})")))
    matches(v, "memory.schema.json");
  matches(m.retrieve("note", R"(,"agent":"x","budget":1)"), "memory_retrieval.schema.json");
  matches(m.retrieve("note", R"(,"agent":"x")"), "memory_retrieval.schema.json");
  matches(m.db.memory_forget("m1", ""), "memory_forget_result.schema.json");
  matches(m.db.memory_get("m1"), "memory.schema.json");
  matches(m.db.memory_forget("m1", R"({"mode":"purge"})"), "memory_forget_result.schema.json");
  matches(m.db.verify(std::nullopt), "verify_report.schema.json");
}

// --- Scope ranges (memory/scope_rows.hpp): each scope's memories own a
// range of memory_fts rowids; retrieval reads the requested ranges only.

namespace {

std::string project_key(const std::string &id) { return "project\x1f" + id; }

// Two project ids whose scopes share a rowid range (a 23-bit hash
// collision, found by counting up).
std::pair<std::string, std::string> colliding_projects() {
  std::map<int64_t, std::string> seen;
  for (int i = 0;; ++i) {
    std::string id = "p" + std::to_string(i);
    auto [it, fresh] = seen.emplace(memory::scope_first_row(project_key(id)), id);
    if (!fresh) return {it->second, id};
  }
}

// What retrieval returned before scope ranges, computed the slow way: every
// match of the scopes joined to its row and filtered in SQL, the best
// kCandidates by bm25 blended and sorted, then taken within the budget.
// Its blend is recomputed here from the documented formula.
struct Expected {
  Ids included, excluded;
  std::vector<double> scores; // of the included, as blended from bm25()
};
Expected reference_retrieve(store::Store &store, const memory::Query &q,
                            const token::Counter &counter) {
  std::string keys = "[";
  for (const memory::ScopeRef &s : q.scopes)
    keys += (keys.size() > 1 ? ",\"" : "\"") + s.scope + "\\u001f" + s.id + "\"";
  keys += "]";
  SQLite::Statement s(
      store.db(),
      "SELECT m.memory_id,bm25(memory_fts,1.0,2.0) AS b,m.priority,m.confidence,m.valid_from,"
      "v.content FROM memory_fts JOIN memories m ON m.doc_id=memory_fts.rowid "
      "JOIN memory_versions v ON v.memory_id=m.memory_id AND v.version=m.version "
      "WHERE memory_fts MATCH ?1 AND m.scope_key IN (SELECT value FROM json_each(?2)) "
      "AND m.valid_from<=?3 AND (m.expires_at IS NULL OR m.expires_at>?3) "
      "AND (m.sensitive=0 OR ?4) AND (m.readers IS NULL OR EXISTS "
      "(SELECT 1 FROM json_each(m.readers) WHERE value=?5)) ORDER BY b LIMIT ?6");
  s.bind(1, q.match == memory::Match::kFts
                ? memory::fts_query(q.text)
                : memory::words_query(q.text, q.match == memory::Match::kAll));
  s.bind(2, keys);
  s.bind(3, q.now);
  s.bind(4, int(q.allow_sensitive));
  if (q.agent) s.bind(5, *q.agent);
  s.bind(6, std::max(memory::kCandidates, 4 * q.limit));
  struct Row {
    std::string id, content;
    double score;
  };
  std::vector<Row> rows;
  while (s.executeStep()) {
    double t = -s.getColumn(1).getDouble();
    double text = t > 0 ? t / (1 + t) : 0;
    double age = std::max<double>(0, double(q.now - s.getColumn(4).getInt64())) / kDay;
    double score = 0.55 * text + 0.15 * std::clamp(s.getColumn(2).getInt() / 100.0, 0.0, 1.0) +
                   0.15 * s.getColumn(3).getDouble() + 0.15 * std::pow(0.5, age / 30);
    rows.push_back({s.getColumn(0).getString(), s.getColumn(5).getString(), score});
  }
  std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
  Expected out;
  int64_t used = 0;
  for (const Row &r : rows) {
    if (int64_t(out.included.size()) == q.limit) break;
    int64_t tokens = counter.count(r.content);
    if (q.budget && used + tokens > *q.budget) {
      out.excluded.push_back(r.id);
      continue;
    }
    used += tokens;
    out.included.push_back(r.id);
    out.scores.push_back(r.score);
  }
  return out;
}

// Checks a retrieval against reference_retrieve: the same memories, in
// the same order, with the same scores to the bit.
void check_retrieval(const memory::Retrieval &got, const Expected &want) {
  Ids included, excluded;
  std::vector<double> scores;
  for (const auto &r : got.included) {
    included.push_back(r.memory_id);
    scores.push_back(r.score);
  }
  for (const auto &x : got.excluded) excluded.push_back(x.memory_id);
  CHECK(included == want.included);
  CHECK(excluded == want.excluded);
  CHECK(scores == want.scores);
}

// `count` MemoryWritten events (ids m<first>...) in four scopes, with
// every part of the blend and every filter varied; words from a small
// vocabulary so that queries match many.
std::string random_memories(int first, int count, uint64_t seed) {
  const char *words[] = {"cache", "deploy", "build", "token", "retry", "schema", "vault", "lint"};
  const char *scopes[] = {R"("scope":"project","scope_id":"p1")",
                          R"("scope":"project","scope_id":"p2")", R"("scope":"global")",
                          R"("scope":"user","scope_id":"u1")"};
  uint64_t rng = seed;
  auto next = [&](uint64_t n) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (rng >> 33) % n;
  };
  std::string nd;
  for (int i = first; i < first + count; ++i) {
    std::string content;
    for (uint64_t k = 0, n = 2 + next(10); k < n; ++k)
      content += std::string(k ? " " : "") + words[next(std::size(words))];
    std::string more = R"(,"priority":)" + std::to_string(next(101)) + R"(,"confidence":)" +
                       std::to_string(double(next(101)) / 100);
    if (next(10) == 0) more += R"(,"sensitive":true)";
    if (uint64_t r = next(20); r == 0)
      more += R"(,"readers":["coder"])";
    else if (r == 1)
      more += R"(,"readers":["reviewer","coder"])";
    int64_t ts = kT0 + int64_t(next(60)) * kDay / 2;
    if (next(10) == 0)
      more += R"(,"expires_at":)" + std::to_string(ts + int64_t(1 + next(40)) * kDay / 2);
    nd += R"({"type":"MemoryWritten","actor":"a","ts":)" + std::to_string(ts) +
          R"(,"payload":{"memory_id":"m)" + std::to_string(i) + R"(",)" + scopes[next(4)] +
          R"(,"kind":"fact","content":")" + content + R"(","keywords":[")" +
          words[next(std::size(words))] +
          R"("],"source_refs":["evt_src"],"update_policy":"manual")" + more + "}}\n";
  }
  return nd;
}

} // namespace

TEST_CASE("memory: each scope's memories lie in its own rowid range, rebuilt alike") {
  MemoryDb m;
  m.put("a1", "deploy with the blue pipeline");
  m.put("a2", "deploy on fridays never");
  m.db.memory_write("s",
                    R"({"memory_id":"g1","scope":"global","content":"deploy on weekdays",)"
                    R"("source_refs":["evt_src"],"update_policy":"manual","ts":1700000000000})");
  m.db.memory_update(
      "a1",
      R"({"content":"deploy with the red pipeline","source_refs":["evt_src"],"ts":1700000001000})");
  store::Store store(m.path, {});
  SQLite::Statement q(store.db(), "SELECT memory_id,scope_key,doc_id FROM memories ORDER BY 1");
  int rows = 0;
  while (q.executeStep()) {
    ++rows;
    INFO(q.getColumn(0).getString());
    int64_t doc = q.getColumn(2).getInt64();
    std::string key = q.getColumn(1).getString();
    CHECK(doc >= memory::scope_first_row(key));
    CHECK(doc <= memory::scope_last_row(key));
  }
  CHECK(rows == 3);
  CHECK(memory::scope_first_row(project_key("p1")) != memory::scope_first_row("global\x1f"));
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
  CHECK(m.found("red pipeline") == Ids{"a1"});
  CHECK(m.found("blue").empty()); // the superseded version is not in the index
}

TEST_CASE("memory: a batch's memories reach memory_fts in rowid order, one segment a batch") {
  MemoryDb m;
  // Four scopes in log order (rowids up and down), and in the same batch
  // an update of one of them and a tombstone of another.
  std::string nd = random_memories(0, 200, 515);
  nd += R"({"type":"MemoryUpdated","actor":"a","payload":{"memory_id":"m1",)"
        R"("content":"zebra crossing","source_refs":["evt_src"]}})"
        "\n"
        R"({"type":"MemoryDeleted","actor":"a","payload":{"memory_id":"m2","mode":"tombstone"}})"
        "\n";
  m.db.append_batch("s", nd);
  auto segments = [&] {
    store::Store s(m.path, store::parse_config(R"({"read_only":true})"));
    return store::fts_shape(s, "memory_fts").segment_pages.size();
  };
  CHECK(segments() == 1); // one flush of FTS5's pending terms, at commit
  CHECK(raw_int(m.path, "SELECT count(*) FROM memories") == 199);
  CHECK(raw_int(m.path, "SELECT version FROM memories WHERE memory_id='m1'") == 2);
  CHECK(raw_int(m.path, "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH 'zebra'") == 1);
  CHECK(raw_int(m.path, "SELECT count(*) FROM memories WHERE memory_id='m2'") == 0);
  CHECK(raw_int(m.path, "SELECT count(*) FROM memory_rank") == 199);
  CHECK(raw_rc(m.path, "INSERT INTO memory_fts(memory_fts) VALUES('integrity-check')") ==
        SQLITE_OK);
  // A second batch updates memories of the first (row by row).
  m.db.append_batch("s", R"({"type":"MemoryUpdated","actor":"a","payload":{"memory_id":"m7",)"
                         R"("content":"zebra stripes","source_refs":["evt_src"]}})"
                         "\n"
                         R"({"type":"MemoryUpdated","actor":"a","payload":{"memory_id":"m3",)"
                         R"("content":"zebra herd","source_refs":["evt_src"]}})"
                         "\n");
  CHECK(raw_int(m.path, "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH 'zebra'") == 3);
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("memory: two scopes sharing a rowid range still never see each other's memories") {
  MemoryDb m;
  auto [p, q] = colliding_projects();
  REQUIRE(memory::scope_first_row(project_key(p)) == memory::scope_first_row(project_key(q)));
  for (const std::string &id : {p, q})
    m.db.memory_write(
        "s", R"({"memory_id":"m_)" + id + R"(","scope":"project","scope_id":")" + id +
                 R"(","content":"the build runs on )" + id +
                 R"(","source_refs":["evt_src"],"update_policy":"manual","ts":1700000000000})");
  auto scope = [](const std::string &id) {
    return R"([{"scope":"project","id":")" + id + R"("}])";
  };
  CHECK(m.found("build", "", scope(p)) == Ids{"m_" + p});
  CHECK(m.found("build", "", scope(q)) == Ids{"m_" + q});
  CHECK(m.found(q, "", scope(p)).empty());
}

TEST_CASE("memory: retrieval over scope ranges ranks exactly as one filtered query over all") {
  MemoryDb m;
  m.db.append_batch("s", random_memories(0, 400, 12345));
  store::Store store(m.path, {});
  const token::Counter &counter = token::default_counter();
  int compared = 0;
  for (const char *text : {"cache", "deploy build", "token retry vault", "lint schema cache"})
    for (int64_t limit : {1, 5, 20})
      for (std::optional<int64_t> budget : {std::optional<int64_t>(), std::optional<int64_t>(12)})
        for (const char *agent : {"", "coder", "reviewer"})
          for (bool sensitive : {false, true}) {
            memory::Query q;
            q.text = text;
            q.scopes = {{"project", "p1"}, {"global", ""}, {"user", "u1"}};
            q.now = kT0 + 20 * kDay;
            q.limit = limit;
            q.budget = budget;
            q.allow_sensitive = sensitive;
            if (*agent) q.agent = agent;
            INFO(text << " limit " << limit << " budget " << budget.value_or(-1) << " agent "
                      << agent << " sensitive " << sensitive);
            Expected want = reference_retrieve(store, q, counter);
            check_retrieval(memory::retrieve(store, q, counter), want);
            compared += !want.included.empty();
          }
  CHECK(compared >= 120);
}

TEST_CASE("memory: the bm25 statistics a connection keeps never outlive a change to the index") {
  MemoryDb m;
  m.db.append_batch("s", random_memories(0, 300, 4242));
  // The retrieving handle: it keeps each phrase's statistics across
  // retrievals (bm25.hpp). Every change below changes the table's rows or
  // a phrase's matches, so a statistic kept past it changes scores.
  store::Store store(m.path, {});
  const token::Counter &counter = token::default_counter();
  std::vector<std::string> texts{"cache", "deploy build", "token retry vault"};
  auto check_all = [&](const char *step) {
    for (const std::string &text : texts)
      for (memory::Match match : {memory::Match::kAny, memory::Match::kAll, memory::Match::kFts}) {
        memory::Query q;
        q.text = text;
        q.match = match;
        q.scopes = {{"project", "p1"}, {"global", ""}, {"user", "u1"}};
        q.now = kT0 + 20 * kDay;
        INFO(std::string(step) << ": " << text << " match " << int(match));
        check_retrieval(memory::retrieve(store, q, counter), reference_retrieve(store, q, counter));
      }
  };
  check_all("first retrieval");
  check_all("the same again, from the kept statistics");
  // Another handle (the engine's connection) writes, updates, forgets.
  m.db.append_batch("s", random_memories(300, 40, 99));
  check_all("after another handle's writes");
  m.db.memory_update("m7", R"({"content":"cache cache cache lint","source_refs":["evt_src"]})");
  check_all("after another handle's update");
  m.db.memory_forget("m8", "");
  check_all("after a tombstone");
  m.db.memory_forget("m9", R"({"mode":"purge"})");
  check_all("after a purge");
  // A failed write changes nothing: its transaction is rolled back.
  CHECK_THROWS(m.db.append_batch(
      "s", random_memories(400, 5, 7) + R"({"type":"MemoryWritten","actor":"a","payload":{)" +
               R"("memory_id":"bad","scope":"global","content":"cache"}})" + "\n"));
  CHECK(code_of([&] { m.db.memory_get("m400"); }) == Code::kNotFound);
  check_all("after a failed write");
  // This handle's own changes: inside its write transaction the statistics
  // are its uncommitted ones, and after the rollback the old ones again.
  {
    store::Store::WriteTransaction tx(store);
    store.db().exec("DELETE FROM memories WHERE memory_id IN ('m1','m2','m3')");
    texts.push_back("schema lint"); // first counted here, uncommitted
    check_all("inside a write transaction");
  }
  check_all("after its rollback");
  {
    store::Store::WriteTransaction tx(store);
    store.db().exec("DELETE FROM memories WHERE memory_id IN ('m4','m5')");
    tx.commit();
  }
  check_all("after this handle's commit");
  // Another connection, as another process would.
  raw_sql(m.path, "DELETE FROM memories WHERE memory_id IN ('m10','m11')");
  check_all("after another connection's commit");
}

TEST_CASE("memory: the bm25 statistics a connection keeps outlive commits that leave the index") {
  MemoryDb m;
  m.db.append_batch("s", random_memories(0, 200, 77));
  store::Store store(m.path, {});
  const token::Counter &counter = token::default_counter();
  auto counted = [&](const char *text) {
    memory::Query q;
    q.text = text;
    q.scopes = {{"project", "p1"}, {"global", ""}};
    q.now = kT0 + 20 * kDay;
    memory::Retrieval r = memory::retrieve(store, q, counter);
    check_retrieval(r, reference_retrieve(store, q, counter));
    return r.phrases_counted;
  };
  CHECK(counted("cache deploy") == 2); // each word's rows, counted once
  CHECK(counted("deploy cache") == 0); // kept, in any order
  // Commits that leave memory_fts as it was: usage recorded, an event
  // appended, through another handle. The file's data version changed;
  // the statistics stay.
  m.retrieve("cache");
  m.db.append("s", R"({"type":"UserPromptSubmitted","actor":"user","ts":)" + std::to_string(kT0) +
                       R"(,"payload":{"text":"and now?"}})");
  CHECK(counted("cache deploy") == 0);
  CHECK(counted("cache vault") == 1); // a new word is counted
  // A memory written changes the counts: all are counted again.
  m.put("new1", "cache vault");
  CHECK(counted("cache vault") == 2);
  CHECK(counted("cache vault") == 0);
  // Without the count nothing is kept, rather than kept for good.
  raw_sql(m.path, "DELETE FROM memory_changes");
  CHECK(counted("cache vault") == 2);
  CHECK(counted("cache vault") == 2);
}

// SQL that takes a file back to schema 11: no memory_rank, and the
// memories triggers as schema 7 wrote them (taken from its migration).
std::string to_schema_11() {
  const store::EmbeddedFile *v7 = store::find_embedded("sql/007_memories.sql");
  REQUIRE(v7);
  std::string_view sql = v7->content;
  size_t first = sql.find("CREATE TRIGGER memories_fts_insert");
  size_t last = sql.find("END;", sql.find("CREATE TRIGGER memories_fts_update"));
  REQUIRE(first != std::string_view::npos);
  REQUIRE(last != std::string_view::npos);
  return kBeforeSchema15 +
         std::string("DROP TRIGGER memories_fts_insert; DROP TRIGGER memories_fts_delete;"
                     "DROP TRIGGER memories_fts_update; DROP TABLE memory_rank;") +
         std::string(sql.substr(first, last + 4 - first)) + "PRAGMA user_version = 11;";
}

TEST_CASE("optimize merges the full-text indexes and changes no answer") {
  MemoryDb m;
  for (int batch = 0; batch < 30; ++batch)
    m.db.append_batch("s", random_memories(batch * 20, 20, 99 + uint64_t(batch)));
  for (int i = 0; i < 30; ++i)
    m.db.append("s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"fix the )" +
                         std::string(i % 2 ? "cache" : "vault") + " retry number " +
                         std::to_string(i) + R"("}})");
  m.db.search("retry", R"({"limit":5})"); // indexes the messages, a transaction of its own
  m.db.append("s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"retry"}})");
  auto answers = [&] {
    return m.retrieve("cache retry", R"(,"limit":20,"record_usage":false)",
                      R"([{"scope":"project","id":"p1"},{"scope":"global"}])") +
           m.db.search("retry", R"({"limit":50})");
  };
  std::string before = answers();
  auto segments = [&](const char *table) {
    store::Store s(m.path, store::parse_config(R"({"read_only":true})"));
    return store::fts_shape(s, table).segment_pages.size();
  };
  REQUIRE(segments("memory_fts") > 1);
  simdjson::dom::parser p;
  std::string report = m.db.optimize("");
  for (auto i : p.parse(report)["indexes"].get_array()) {
    std::string table(i["index"].get_string().value());
    INFO(table);
    CHECK(i["segments_after"].get_int64().value() == int64_t(segments(table.c_str())));
    CHECK(i["segments_after"].get_int64().value() <= 1);
  }
  CHECK(segments("memory_fts") == 1);
  CHECK(segments("search_words") == 1); // the message appended after the search included
  CHECK(answers() == before);
  {
    // On a ctxdb connection: search_words' tokenizer is the library's.
    store::Store s(m.path, store::parse_config(""));
    for (const char *table : {"memory_fts", "search_words", "search_grams"})
      CHECK_NOTHROW(s.db().exec(std::string("INSERT INTO ") + table + "(" + table +
                                ") VALUES('integrity-check')"));
  }
  CHECK(field(m.db.rebuild(R"({"check":true,"search":true})"), "identical") == "true");
  CHECK(message_of([&] { m.db.optimize(R"({"merge":true})"); }).find("merge") != std::string::npos);
}

// Three retrievals' memories and scores, in order, as a migration must
// leave them.
std::vector<std::string> retrieval_results(store::Store &store) {
  const token::Counter &counter = token::default_counter();
  std::vector<std::string> out;
  for (const char *text : {"cache", "deploy build", "token retry vault"}) {
    memory::Query q;
    q.text = text;
    q.scopes = {{"project", "p1"}, {"global", ""}};
    q.now = kT0 + 20 * kDay;
    q.limit = 20;
    for (const memory::Retrieved &r : memory::retrieve(store, q, counter).included)
      out.push_back(r.memory_id + "@" + std::to_string(r.score));
  }
  return out;
}

// 300 memories with an update and a forget; the retrieval results they give.
std::vector<std::string> write_history(MemoryDb &m, uint64_t seed) {
  m.db.append_batch("s", random_memories(0, 300, seed));
  // At the clock's now, long after m3's expiry: the update brings its own rule.
  m.db.memory_update(
      "m3",
      R"({"content":"cache vault retry","source_refs":["evt_src"],"update_policy":"manual"})");
  m.db.memory_forget("m4", R"({"mode":"tombstone"})");
  store::Store store(m.path, {});
  std::vector<std::string> results = retrieval_results(store);
  CHECK(results.size() >= 30);
  return results;
}

TEST_CASE("memory: migration 012 derives memory_rank from a schema-11 file's memories") {
  MemoryDb m;
  std::vector<std::string> before = write_history(m, 4242);
  raw_sql(m.path, to_schema_11());
  Engine reopened(m.path, ""); // migrates
  store::Store migrated(m.path, {});
  CHECK(retrieval_results(migrated) == before);
  CHECK(field(reopened.rebuild(R"({"check":true})"), "identical") == "true");
  // The triggers of schema 12 keep it in step with later writes.
  reopened.memory_update("m5", R"({"content":"lint schema","source_refs":["evt_src"]})");
  CHECK(field(reopened.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("memory: migration 013 moves a schema-12 file's global memories to the first range") {
  MemoryDb m;
  std::vector<std::string> before = write_history(m, 4343);
  auto global_rows = [&](const std::string &where) {
    return raw_int(m.path, "SELECT count(*) FROM memories WHERE scope_key = 'global' || "
                           "char(31) AND " +
                               where);
  };
  int64_t global = global_rows("1");
  REQUIRE(global > 30);
  CHECK(global_rows("doc_id < (1 << 40)") == global);
  // The file as schema 12 left it: the global range where its hash put it
  // (the update trigger moves memory_fts and memory_rank rows along).
  int64_t hashed =
      int64_t((memory::fnv1a64(memory::kGlobalScopeKey) & memory::kScopeMask) << memory::kPosBits);
  raw_sql(m.path,
          kBeforeSchema15 + std::string("UPDATE memories SET doc_id = ") + std::to_string(hashed) +
              " + doc_id WHERE scope_key = 'global' || char(31); PRAGMA user_version = 12;");
  REQUIRE(global_rows("doc_id >= " + std::to_string(hashed)) == global);
  Engine reopened(m.path, ""); // migrates
  CHECK(global_rows("doc_id < (1 << 40)") == global);
  store::Store migrated(m.path, {});
  CHECK(retrieval_results(migrated) == before);
  CHECK(raw_rc(m.path, "INSERT INTO memory_fts(memory_fts) VALUES('integrity-check')") ==
        SQLITE_OK);
  CHECK(raw_int(m.path, "SELECT count(*) FROM memory_rank r JOIN memories m USING (doc_id)") ==
        raw_int(m.path, "SELECT count(*) FROM memories"));
  CHECK(field(reopened.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("memory: migration 015 counts a schema-14 file's memory_rank rows") {
  MemoryDb m;
  std::vector<std::string> before = write_history(m, 4545);
  int64_t rows = raw_int(m.path, "SELECT count(*) FROM memory_rank");
  raw_sql(m.path, kBeforeSchema15 + std::string("PRAGMA user_version = 14;"));
  Engine reopened(m.path, ""); // migrates
  CHECK(raw_int(m.path, "SELECT changes FROM memory_changes") == rows);
  store::Store migrated(m.path, {});
  CHECK(retrieval_results(migrated) == before);
  reopened.memory_update("m5", R"({"content":"lint schema","source_refs":["evt_src"]})");
  CHECK(raw_int(m.path, "SELECT changes FROM memory_changes") == rows + 2);
}

TEST_CASE("memory: memory_changes counts every change to memory_rank, rebuilds included") {
  MemoryDb m;
  m.db.append_batch("s", random_memories(0, 120, 31));
  auto changes = [&] { return raw_int(m.path, "SELECT changes FROM memory_changes"); };
  CHECK(changes() == 120);
  m.db.memory_update("m3", R"({"content":"cache lint","source_refs":["evt_src"]})");
  m.db.memory_forget("m4", "");
  int64_t before = changes();
  CHECK(before == 120 + 2 + 1); // an update replaces a row; a tombstone deletes one
  // A rebuild that gives back the same rows rolls back: nothing counted.
  CHECK(field(m.db.rebuild(R"({"check":true})"), "identical") == "true");
  CHECK(changes() == before);
  // One that changes a table commits, and every row it replaced counts.
  int64_t live = raw_int(m.path, "SELECT count(*) FROM memory_rank");
  raw_sql(m.path, "DELETE FROM messages");
  CHECK(field(m.db.rebuild("{}"), "identical") == "false");
  CHECK(changes() == before + 2 * live);
  // No other connection sees a count that an uncommitted write bumped.
  CHECK_THROWS(m.db.append_batch(
      "s", random_memories(400, 5, 7) + R"({"type":"MemoryWritten","actor":"a","payload":{)" +
               R"("memory_id":"bad","scope":"global","content":"cache"}})" + "\n"));
  CHECK(changes() == before + 2 * live);
}

TEST_CASE("memory: migration 009 moves a schema-8 file's memories into their scope ranges") {
  MemoryDb m;
  m.put("a1", "deploy with the blue pipeline");
  m.db.memory_write("s", R"({"memory_id":"g1","scope":"global","content":"deploy on weekdays",)"
                         R"("source_refs":["evt_src"],"update_policy":"manual"})");
  std::string before = snapshot(m.db);
  // The file as schema 8 left it: doc_id the pos of the write, no mark,
  // and none of the later migrations (010: the chunks' hash column).
  raw_sql(m.path, to_schema_11() +
                      "UPDATE memories SET doc_id = doc_id % (1 << 40);"
                      "DROP TABLE search_mark; ALTER TABLE artifact_chunks DROP COLUMN sha256_of;"
                      "PRAGMA user_version = 8;");
  Engine reopened(m.path, "");
  CHECK(snapshot(reopened) == before);
  CHECK(field(reopened.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("memory: ctxdb_bm25 scores every row as bm25() does, its statistics shared") {
  MemoryDb m;
  const char *words[] = {"cache", "deploy", "build", "token", "retry", "schema", "vault", "lint"};
  const char *scopes[] = {R"("scope":"project","scope_id":"p1")", R"("scope":"global")"};
  uint64_t rng = 777;
  auto next = [&](uint64_t n) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (rng >> 33) % n;
  };
  std::string nd;
  for (int i = 0; i < 300; ++i) {
    std::string content;
    for (uint64_t k = 0, n = 1 + next(25); k < n; ++k)
      content += std::string(k ? " " : "") + words[next(std::size(words))];
    nd += R"({"type":"MemoryWritten","actor":"a","ts":1700000000000,"payload":{"memory_id":"m)" +
          std::to_string(i) + R"(",)" + scopes[next(2)] + R"(,"kind":"fact","content":")" +
          content + R"(","keywords":[")" + words[next(std::size(words))] +
          R"("],"source_refs":["evt_src"],"update_policy":"manual"}})" + "\n";
  }
  m.db.append_batch("s", nd);
  store::Store store(m.path, {});
  sqlite3 *db = store.db().getHandle();
  sqlite3_stmt *st = nullptr;
  // Its row length both from FTS5's own lookup (NULL) and from the
  // %_docsize record the query joins.
  REQUIRE(
      sqlite3_prepare_v2(
          db,
          "SELECT memory_fts.rowid,bm25(memory_fts,1.0,2.0),ctxdb_bm25(memory_fts,?2,NULL,1.0,2.0),"
          "ctxdb_bm25(memory_fts,?2,d.sz,1.0,2.0) FROM memory_fts CROSS JOIN "
          "memory_fts_docsize d ON d.id=memory_fts.rowid WHERE memory_fts MATCH ?1 AND "
          "memory_fts.rowid BETWEEN ?3 AND ?4",
          -1, &st, nullptr) == SQLITE_OK);
  int rows = 0;
  for (const char *match : {R"("cache")", R"("deploy" OR "vault" OR "lint")",
                            R"("build" AND "token")", R"("retry schema" OR "cache")", "lin*"}) {
    memory::Bm25Stats stats; // one per MATCH expression, as retrieval does
    for (const char *key : {"project\x1fp1", "global\x1f"}) {
      INFO(match << " in " << key);
      sqlite3_reset(st);
      sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
      sqlite3_bind_pointer(st, 2, &stats, memory::kBm25StatsType, nullptr);
      sqlite3_bind_int64(st, 3, memory::scope_first_row(key));
      sqlite3_bind_int64(st, 4, memory::scope_last_row(key));
      while (sqlite3_step(st) == SQLITE_ROW) {
        CHECK(sqlite3_column_double(st, 2) == sqlite3_column_double(st, 1)); // to the bit
        CHECK(sqlite3_column_double(st, 3) == sqlite3_column_double(st, 1));
        ++rows;
      }
    }
  }
  sqlite3_finalize(st);
  CHECK(rows > 300);
}

TEST_CASE("memory: ctxdb_bm25 without its statistics bound is an error, not a crash") {
  MemoryDb m;
  m.put("a1", "deploy with the blue pipeline");
  store::Store store(m.path, {});
  CHECK_THROWS_AS(
      store.db().exec("SELECT ctxdb_bm25(memory_fts,NULL,NULL,1.0) FROM memory_fts WHERE "
                      "memory_fts MATCH 'deploy'"),
      SQLite::Exception);
}

TEST_CASE("memory: retrieve reads one snapshot of its own, or the caller's") {
  MemoryDb m;
  m.put("a1", "deploy with the blue pipeline");
  m.put("a2", "deploy on fridays never", R"(,"priority":90)");
  store::Store store(m.path, {});
  memory::Query q;
  q.text = "deploy";
  q.scopes = {{"project", "p1"}};
  q.now = kT0 + kDay;
  const token::Counter &counter = token::default_counter();
  auto ids = [](const memory::Retrieval &r) {
    Ids out;
    for (const auto &x : r.included) out.push_back(x.memory_id);
    return out;
  };
  Ids alone = ids(memory::retrieve(store, q, counter));
  CHECK(alone == Ids{"a2", "a1"});
  CHECK(sqlite3_get_autocommit(store.db().getHandle()) == 1); // its snapshot is closed
  {
    store::Store::ReadTransaction snapshot(store);
    CHECK(ids(memory::retrieve(store, q, counter)) == alone);
  }
  store::Store::WriteTransaction tx(store);
  CHECK(ids(memory::retrieve(store, q, counter)) == alone);
  CHECK(sqlite3_get_autocommit(store.db().getHandle()) == 0); // the caller's is left open
}

TEST_CASE("memory: a ttl_ms past the latest time is refused, not wrapped into the past") {
  MemoryDb m;
  std::string error =
      message_of([&] { m.put("t1", "overflowing ttl note", R"(,"ttl_ms":9223372036854775807)"); });
  CHECK(error.find("ttl_ms: 9223372036854775807 after the event's ts") != std::string::npos);
  CHECK(code_of([&] { m.db.memory_get("t1"); }) == Code::kNotFound);
}

TEST_CASE("memory: an update never writes a version that is expired when written") {
  MemoryDb m;
  m.db.memory_write("s", R"({"memory_id":"e1","scope":"project","scope_id":"p1","content":)"
                         R"("rotate the staging password","source_refs":["evt_src"],)"
                         R"("ttl_ms":3600000,"ts":)" +
                             std::to_string(kT0) + "}");
  std::string update = R"({"content":"rotate it weekly","source_refs":["evt_src"],"ts":)" +
                       std::to_string(kT0 + 2 * 3600000);
  std::string error = message_of([&] { m.db.memory_update("e1", update + "}"); });
  CHECK(error.find("expires_at: the version would be expired when written") != std::string::npos);
  CHECK(field(m.db.memory_get("e1"), "version") == "1");
  // With an expiry of its own, the same update is taken.
  m.db.memory_update("e1", update + R"(,"ttl_ms":3600000})");
  CHECK(field(m.db.memory_get("e1"), "version") == "2");
}

TEST_CASE("memory: a version never ends before it begins") {
  MemoryDb m;
  m.put("v", "alpha version one", "", 1000);
  for (const char *call : {"update", "delete"}) {
    CAPTURE(call);
    std::string error = message_of([&] {
      if (std::string(call) == "update")
        m.db.memory_update("v", R"({"content":"alpha version two","source_refs":["evt_src"],)"
                                R"("ts":)" +
                                    std::to_string(kT0 + 500) + "}");
      else
        m.db.memory_forget("v", R"({"mode":"tombstone","ts":)" + std::to_string(kT0 + 500) + "}");
    });
    CHECK(error.find("ts: " + std::to_string(kT0 + 500) + " is before version 1 began") !=
          std::string::npos);
  }
  CHECK(column(m.db.memory_list(R"({"as_of":)" + std::to_string(kT0 + 1000) + "}"), "content") ==
        Ids{"alpha version one"});
}

TEST_CASE("memory: updating a purged memory says it was purged") {
  MemoryDb m;
  m.put("m1", "secret");
  m.db.memory_forget("m1", R"({"mode":"purge"})");
  std::string update = R"({"content":"x","source_refs":["evt_src"]})";
  CHECK(code_of([&] { m.db.memory_update("m1", update); }) == Code::kConflict);
  CHECK(message_of([&] { m.db.memory_update("m1", update); }) ==
        "memory 'm1' was forgotten (purge): it cannot be updated");
}

} // namespace memory_test
