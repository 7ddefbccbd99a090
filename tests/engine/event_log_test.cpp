// The event log: sessions, appends, batches, idempotent retries, the hash
// chain and its verification, export and import.
#include "engine.hpp"
#include "log/event_log.hpp"
#include "store/store.hpp"
#include "test_util.hpp"
#include "util/ids.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>
#include <sqlite3.h>

#include <set>
#include <string>
#include <vector>

namespace event_log_test {

using namespace ctxdb;
using test::code_of;
using test::export_all;
using test::field;
using test::raw_sql;

namespace {

const char *kPrompt =
    R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"fix the failing test"}})";

} // namespace

TEST_CASE("ids are prefixed, unique and increase in creation order") {
  std::set<std::string> seen;
  std::string prev;
  for (int i = 0; i < 10000; ++i) {
    std::string id = util::new_id("evt_");
    CHECK(id.size() == 4 + 26);
    CHECK(id.rfind("evt_", 0) == 0);
    CHECK(id > prev);
    prev = id;
    seen.insert(id);
  }
  CHECK(seen.size() == 10000);
}

TEST_CASE("a session's events get gapless seqs and a linked hash chain") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  std::string session =
      db.session_create(R"({"id":"ses_1","payload":{"agent_id":"coder","model":"m"}})");
  CHECK(field(session, "id") == "ses_1");
  CHECK(field(session, "event_count") == "1");
  CHECK(field(session, "meta") == R"({"agent_id":"coder","model":"m"})");

  std::string prev_hash = field(db.event_get(field(session, "started_event_id")), "hash");
  for (int i = 2; i <= 5; ++i) {
    std::string e = db.append("ses_1", kPrompt);
    CHECK(field(e, "seq") == std::to_string(i));
    CHECK(field(e, "prev_hash") == prev_hash);
    prev_hash = field(e, "hash");
  }
  auto batch = db.append_batch("ses_1", std::string(kPrompt) + "\n\n" + kPrompt + "\r\n");
  CHECK(field(batch, "count") == "2");
  CHECK(field(batch, "first_seq") == "6");
  CHECK(field(batch, "last_seq") == "7");
  CHECK(field(db.session_get("ses_1"), "event_count") == "7");
  CHECK(field(db.verify(std::nullopt), "ok") == "true");
  CHECK(field(db.verify(std::string_view("ses_1")), "events") == "7");
}

TEST_CASE("sessions: unknown ids, duplicates and listing") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  CHECK(code_of([&] { db.session_get("nope"); }) == Code::kNotFound);
  CHECK(code_of([&] { db.append("nope", kPrompt); }) == Code::kNotFound);
  CHECK(code_of([&] { db.session_create(R"({"payload":{}})"); }) == Code::kInvalidArg);
  std::string generated = field(db.session_create(R"({"payload":{"agent_id":"a"}})"), "id");
  CHECK(generated.rfind("ses_", 0) == 0);
  db.session_create(R"({"id":"s2","payload":{"agent_id":"b"}})");
  CHECK(code_of([&] { db.session_create(R"({"id":"s2","payload":{"agent_id":"b"}})"); }) ==
        Code::kConflict);
  CHECK(code_of([&] {
          db.append("s2", R"({"type":"SessionStarted","actor":"h","payload":{"agent_id":"x"}})");
        }) == Code::kConflict);
  std::string list = db.session_list();
  CHECK(list.find(generated) < list.find("\"s2\""));
}

TEST_CASE("a session created with a host event id is deterministic and safe to retry") {
  test::TempDir dir;
  Engine a(dir.file("a.ctxdb"), ""), b(dir.file("b.ctxdb"), "");
  const char *create = R"({"id":"s","event_id":"evt_s0","ts":1000,"payload":{"agent_id":"a"}})";
  std::string first = a.session_create(create);
  CHECK(a.session_create(create) == first); // a retry returns the same session
  b.session_create(create);
  CHECK(a.event_get("evt_s0") == b.event_get("evt_s0")); // same bytes, same hash
  CHECK(code_of([&] {
          a.session_create(
              R"({"id":"s","event_id":"evt_s0","ts":1000,"payload":{"agent_id":"b"}})");
        }) == Code::kConflict);
}

TEST_CASE("a host-given id makes a retry safe and a different reuse a conflict") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  const char *e1 = R"({"id":"e1","type":"Note","actor":"a","payload":{"x":1.50}})";
  std::string first = db.append("s", e1);
  // Same content, other whitespace and number spelling: the same event.
  CHECK(db.append("s", R"({ "id":"e1", "type":"Note", "actor":"a", "payload":{"x":1.5} })") ==
        first);
  CHECK(code_of([&] {
          db.append("s", R"({"id":"e1","type":"Note","actor":"a","payload":{"x":2}})");
        }) == Code::kConflict);
  CHECK(field(db.session_get("s"), "event_count") == "2");
}

TEST_CASE("bad events are rejected with the field named, and nothing is written") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  std::string before = export_all(db);
  struct Case {
    const char *json;
    Code code;
    const char *names;
  } cases[] = {
      {R"({"actor":"a","payload":{}})", Code::kInvalidArg, "'type'"},
      {R"({"type":"X","payload":{}})", Code::kInvalidArg, "'actor'"},
      {R"({"type":"X","actor":"a"})", Code::kInvalidArg, "'payload'"},
      {R"({"type":"X","actor":"a","payload":[]})", Code::kInvalidArg, "'payload'"},
      {R"({"type":"UserPromptSubmitted","actor":"a","payload":{}})", Code::kInvalidArg,
       "payload.text"},
      {R"({"type":"ToolCallFinished","actor":"a","payload":{"tool_call_id":7}})", Code::kInvalidArg,
       "payload.tool_call_id"},
      {R"({"type":"FileRead","actor":"a","payload":{"bytes":1}})", Code::kInvalidArg,
       "payload.path"},
      {R"({"type":"AssistantMessageCreated","actor":"a","payload":{"content":[{"text":"x"}]}})",
       Code::kInvalidArg, "payload.content[0].type"},
      {R"({"type":"X","actor":"a","payload":{},"ts":"yesterday"})", Code::kInvalidArg, "'ts'"},
      {R"({"type":"X","actor":"a","payload":{},"id":"has space"})", Code::kInvalidArg, "'id'"},
      {R"({"type":"X","actor":"a","payload":{},"session_id":"other"})", Code::kInvalidArg, "other"},
      {R"({"type":"X","actor":"a","payload":{},"parent_id":"evt_nope"})", Code::kNotFound,
       "evt_nope"},
      {R"({"type":"X","actor":"a","payload":{})", Code::kInvalidJson, "invalid JSON"},
      {"{\"type\":\"X\",\"actor\":\"\xc3\",\"payload\":{}}", Code::kInvalidUtf8, "UTF-8"},
  };
  for (const auto &c : cases) {
    INFO(c.json);
    try {
      db.append("s", c.json);
      FAIL("accepted");
    } catch (const Error &e) {
      CHECK(e.code() == c.code);
      CHECK(std::string(e.what()).find(c.names) != std::string::npos);
    }
  }
  // A batch with a bad third line stores none of its lines.
  std::string batch = std::string(kPrompt) + "\n" + kPrompt + "\n{\"type\":\"X\"}\n" + kPrompt;
  try {
    db.append_batch("s", batch);
    FAIL("accepted");
  } catch (const Error &e) {
    CHECK(std::string(e.what()).rfind("line 3: ", 0) == 0);
  }
  CHECK(export_all(db) == before);
}

TEST_CASE("a large batch sees its own earlier events: ids, retries, parents") {
  // Events reach SQLite 16 rows per INSERT; rules about earlier events of
  // the same batch must hold whether those are written yet or not.
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  auto note = [](int i, const std::string &extra = "") {
    std::string id = i % 3 == 0 ? R"(,"id":"n)" + std::to_string(i) + R"(")" : "";
    return R"({"type":"Note","actor":"a","payload":{"i":)" + std::to_string(i) + "}" + id + extra +
           "}";
  };
  std::string batch;
  for (int i = 1; i <= 40; ++i) batch += note(i) + "\n";
  batch += note(39) + "\n";                          // an identical retry, still pending
  batch += note(6) + "\n";                           // one long written
  batch += note(41, R"(,"parent_id":"n39")") + "\n"; // a pending parent
  batch += note(42, R"(,"parent_id":"n3")") + "\n";  // a written parent
  auto r = db.append_batch("s", batch);
  CHECK(field(r, "count") == "44");
  CHECK(field(r, "last_seq") == "43"); // 1 + 40 + 2 new; the retries add none
  CHECK(field(db.verify(std::nullopt), "ok") == "true");
  CHECK(field(db.event_get("n39"), "seq") == "40");

  std::string before = export_all(db);
  std::string conflicting;
  for (int i = 100; i < 130; ++i) conflicting += note(i) + "\n";
  conflicting += R"({"type":"Note","actor":"a","id":"n102","payload":{"other":1}})";
  try {
    db.append_batch("s", conflicting);
    FAIL("accepted");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kConflict);
    CHECK(std::string(e.what()).rfind("line 31: ", 0) == 0);
  }
  CHECK(export_all(db) == before);

  // The export of a large batch imports event for event.
  Engine copy(dir.file("b.ctxdb"), "");
  CHECK(field(copy.import(before), "imported") == "43"); // with SessionStarted
  CHECK(export_all(copy) == before);
}

TEST_CASE("unknown event types are stored and hashed like any other") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  std::string e = db.append(
      "s",
      R"({"type":"acme.CustomThing","actor":"plugin","payload":{"anything":[1,{"goes":true}]},"run_id":"r1","causality":{"caused_by":"e0"},"visibility":"hidden"})");
  CHECK(db.event_get(field(e, "id")) == e);
  CHECK(field(e, "causality") == R"({"caused_by":"e0"})");
  CHECK(field(e, "visibility") == "hidden");
}

TEST_CASE("export then import into an empty file reproduces every event") {
  test::TempDir dir;
  std::string exported;
  {
    Engine a(dir.file("a.ctxdb"), "");
    a.session_create(R"({"id":"s1","payload":{"agent_id":"a"}})");
    std::string root =
        field(a.session_create(R"({"id":"s2","payload":{"agent_id":"b"}})"), "started_event_id");
    for (int i = 0; i < 5; ++i) {
      a.append("s1", kPrompt);
      a.append("s2", R"({"type":"Note","actor":"a","payload":{"i":1},"run_id":"r","parent_id":")" +
                         root + "\"}");
    }
    exported = export_all(a);
  }
  Engine b(dir.file("b.ctxdb"), "");
  CHECK(field(b.import(exported), "imported") == "12");
  CHECK(export_all(b) == exported);
  CHECK(field(b.import(exported), "skipped") == "12"); // importing twice is a no-op
  CHECK(field(b.verify(std::nullopt), "ok") == "true");
  CHECK(field(b.session_get("s2"), "event_count") == "6");
}

TEST_CASE("import rejects events whose hashes or order do not hold") {
  test::TempDir dir;
  std::string exported;
  {
    Engine a(dir.file("a.ctxdb"), "");
    a.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
    a.append("s", kPrompt);
    exported = export_all(a);
  }
  Engine b(dir.file("b.ctxdb"), "");
  std::string tampered = exported;
  tampered.replace(tampered.find("fix the failing test"), 3, "FIX");
  CHECK(code_of([&] { b.import(tampered); }) == Code::kCorrupt);
  std::string second_only = exported.substr(exported.find('\n') + 1);
  CHECK(code_of([&] { b.import(second_only); }) == Code::kNotFound);
  CHECK(export_all(b).empty());
}

TEST_CASE("the log is append-only and verify finds any tampering") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  {
    Engine db(path, "");
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
    for (int i = 0; i < 4; ++i) db.append("s", kPrompt);
  }
  sqlite3 *raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  CHECK(sqlite3_exec(raw, "UPDATE events SET actor='x' WHERE seq=2", nullptr, nullptr, nullptr) ==
        SQLITE_CONSTRAINT);
  CHECK(sqlite3_exec(raw, "DELETE FROM events WHERE seq=5", nullptr, nullptr, nullptr) ==
        SQLITE_CONSTRAINT);
  sqlite3_close(raw);

  auto broken = [&](const std::string &sql) {
    std::string copy = dir.file("copy.ctxdb");
    std::filesystem::remove(copy);
    raw_sql(path, "VACUUM INTO '" + copy + "'");
    raw_sql(copy, "DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete; " + sql);
    Engine db(copy, "");
    return db.verify(std::nullopt);
  };
  SUBCASE("a modified payload") {
    std::string r = broken("UPDATE events SET payload='{\"text\":\"other\"}' WHERE seq=3");
    CHECK(field(r, "ok") == "false");
    CHECK(r.find("\"seq\":3") != std::string::npos);
    CHECK(r.find("payload was modified") != std::string::npos);
  }
  SUBCASE("a modified header field") {
    std::string r = broken("UPDATE events SET actor='mallory' WHERE seq=2");
    CHECK(r.find("\"seq\":2") != std::string::npos);
  }
  SUBCASE("a deleted event in the middle") {
    std::string r = broken("DELETE FROM events WHERE seq=3");
    CHECK(r.find("\"seq\":4") != std::string::npos);
    CHECK(r.find("seq gap") != std::string::npos);
  }
  SUBCASE("a deleted tail") {
    std::string r = broken("DELETE FROM events WHERE seq=5");
    CHECK(field(r, "ok") == "false");
    CHECK(r.find("missing") != std::string::npos);
  }
  SUBCASE("two events swapped") {
    std::string r = broken("UPDATE events SET seq=-1 WHERE seq=2; UPDATE events SET seq=2 WHERE "
                           "seq=3; UPDATE events SET seq=3 WHERE seq=-1");
    CHECK(r.find("\"seq\":2") != std::string::npos);
  }
}

TEST_CASE("rebuild replays the log into identical derived tables, or says what differs") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  Engine db(path, "");
  for (int i = 0; i < 5; ++i) {
    db.session_create(R"({"id":"s)" + std::to_string(i) + R"(","payload":{"agent_id":"a)" +
                      std::to_string(i) + R"("}})");
    db.append("s" + std::to_string(i), kPrompt);
  }
  // Another connection's view of commits: PRAGMA data_version changes
  // when anyone else commits to the file.
  sqlite3 *watch = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &watch) == SQLITE_OK);
  auto version = [&] {
    sqlite3_stmt *q = nullptr;
    sqlite3_prepare_v2(watch, "PRAGMA data_version", -1, &q, nullptr);
    sqlite3_step(q);
    int64_t v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
  };
  int64_t v0 = version();
  std::string report = db.rebuild(R"({"check":true})");
  CHECK(field(report, "identical") == "true");
  CHECK(field(report, "events") == "10");
  CHECK(report.find(R"("table":"sessions","rows":5)") != std::string::npos);
  CHECK(version() != v0); // the search index caught up with the appends
  v0 = version();
  CHECK(field(db.rebuild(""), "identical") == "true");
  CHECK(field(db.rebuild(R"({"check":true,"search":true})"), "identical") == "true");
  CHECK(version() == v0); // nothing came out different, so nothing was written
  std::string sessions = db.session_list();

  raw_sql(path, "UPDATE sessions SET agent_id='forged' WHERE id='s2'");
  int64_t v1 = version();
  try {
    db.rebuild(R"({"check":true})");
    FAIL("a forged projection passed the check");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kCheckFailed);
    CHECK(std::string(e.what()).find("sessions") != std::string::npos);
  }
  CHECK(field(db.session_get("s2"), "agent_id") == "forged"); // the failed check changed nothing
  CHECK(version() == v1);
  CHECK(field(db.rebuild(""), "identical") == "false"); // without check it repairs
  CHECK(version() != v1);                               // and commits
  CHECK(db.session_list() == sessions);
  sqlite3_close(watch);

  CHECK(code_of([&] { db.rebuild(R"({"chek":true})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { db.rebuild(R"({"check":1})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { db.rebuild(R"({"search":"yes"})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { db.rebuild("{"); }) == Code::kInvalidJson);

  // The checksums of the tables a rebuild starts from are read on a second
  // connection; an in-memory database has none, and reads them in its own.
  Engine mem(":memory:", "");
  mem.session_create(R"({"id":"m","payload":{"agent_id":"a"}})");
  mem.append("m", kPrompt);
  std::string in_memory = mem.rebuild(R"({"check":true,"search":true})");
  CHECK(field(in_memory, "identical") == "true");
  CHECK(in_memory.find(R"("table":"messages","rows":1)") != std::string::npos);
}

TEST_CASE("scan_all reads every event in append order, ahead on a second connection or not") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  {
    Engine db(path, "");
    // More events than the read-ahead's batches hold, from interleaved
    // sessions, so that batches are reused and pos order is not seq order.
    for (int s = 0; s < 3; ++s)
      db.session_create(R"({"id":"s)" + std::to_string(s) + R"(","payload":{"agent_id":"a"}})");
    for (int i = 0; i < 700; ++i)
      db.append("s" + std::to_string(i % 3),
                R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"p)" +
                    std::to_string(i) + R"("}})");
  }
  store::Store store(path, {});
  log::EventLog log(store);
  std::vector<log::Event> expected = log.read_all(0, -1);
  REQUIRE(expected.size() == 703);
  int parsed = 0; // events that came with their payload parsed, as it reads
  auto scan = [&] {
    std::vector<std::string> seen;
    parsed = 0;
    log.scan_all([&](log::Event &e) {
      if (e.parsed_payload && simdjson::minify(*e.parsed_payload) == e.payload) ++parsed;
      seen.push_back(std::to_string(e.pos) + " " + e.id + " " + e.session_id + " " +
                     std::to_string(e.seq) + " " + e.payload);
    });
    return seen;
  };
  std::vector<std::string> want;
  for (const log::Event &e : expected)
    want.push_back(std::to_string(e.pos) + " " + e.id + " " + e.session_id + " " +
                   std::to_string(e.seq) + " " + e.payload);
  CHECK(scan() == want);
  CHECK(parsed == 703); // read ahead: the reader parsed them

  // An error of fn's ends the scan (and stops the reader); the next one
  // starts over.
  int calls = 0;
  CHECK_THROWS_WITH(log.scan_all([&](log::Event &) {
    if (++calls == 300) throw std::runtime_error("projection failed");
  }),
                    "projection failed");
  CHECK(calls == 300);
  CHECK(scan() == want);

  // An event this connection holds uncommitted is not on the second
  // connection: the scan reads here instead, and sees it.
  store.db().exec("BEGIN IMMEDIATE");
  store.db().exec("INSERT INTO events(pos,id,session_no,seq,ts,type,actor,payload,payload_hash,"
                  "prev_hash,hash) SELECT pos+1000,id||'x',session_no,seq+1000,ts,type,actor,"
                  "payload,payload_hash,prev_hash,hash FROM events WHERE pos=703");
  std::vector<std::string> with_pending = scan();
  store.db().exec("ROLLBACK");
  REQUIRE(with_pending.size() == 704);
  CHECK(std::equal(want.begin(), want.end(), with_pending.begin()));
  CHECK(with_pending.back().starts_with("1703 "));

  // A row the reader cannot decode (a stored hash of 3 bytes, committed)
  // fails the scan with the reader's error, after the rows before it.
  store.db().exec("INSERT INTO events(pos,id,session_no,seq,ts,type,actor,payload,payload_hash,"
                  "prev_hash,hash) SELECT pos+1000,id||'x',session_no,seq+1000,ts,type,actor,"
                  "payload,x'000102',prev_hash,hash FROM events WHERE pos=703");
  calls = 0;
  try {
    log.scan_all([&](log::Event &) { ++calls; });
    FAIL("a damaged row was read");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kCorrupt);
    CHECK(std::string(e.what()).find("hash") != std::string::npos);
  }
  CHECK(calls == 703);
}

} // namespace event_log_test
