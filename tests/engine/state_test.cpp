// The state projection through the engine: the state of each branch, what a
// rejected op leaves behind (nothing), forks, time travel and snapshots.
#include "engine.hpp"
#include "project/rebuild.hpp"
#include "test_util.hpp"
#include "util/zstd.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>
#include <vector>

namespace state_test {

using namespace ctxdb;
using test::code_of;

namespace {

struct Stored {
  std::string id, branch_id, parent_id;
};

Stored stored(const std::string &json) {
  simdjson::dom::parser p;
  simdjson::dom::element e = p.parse(json);
  Stored s;
  s.id = std::string(e["id"].get_string().value());
  s.branch_id = std::string(e["branch_id"].get_string().value());
  std::string_view parent;
  if (!e["parent_id"].get(parent)) s.parent_id = parent;
  return s;
}

// Appends one event; `envelope` adds fields such as "parent_id":"…".
Stored add(Engine &db, const std::string &session, const std::string &type,
           const std::string &payload, const std::string &envelope = "") {
  return stored(db.append(session, R"({"type":")" + type + R"(","actor":"agent","payload":)" +
                                       payload + (envelope.empty() ? "" : "," + envelope) + "}"));
}

std::string state_of(Engine &db, const std::string &session, const std::string &branch = "main") {
  return db.state(session, branch, std::nullopt);
}

std::vector<std::string> strings_at(const std::string &doc, const char *pointer,
                                    const char *field) {
  simdjson::dom::parser p;
  std::vector<std::string> out;
  simdjson::dom::element root = p.parse(doc);
  simdjson::dom::array list = root.at_pointer(pointer).get_array();
  for (simdjson::dom::element item : list) out.emplace_back(item[field].get_string().value());
  return out;
}

// A checksum of every table in the file, read through a second connection.
std::string file_digest(const std::string &path) {
  store::Store s(path, store::Config{});
  SQLite::Statement q(s.db(), "SELECT name FROM sqlite_master WHERE type='table' AND "
                              "name NOT LIKE 'sqlite_%' ORDER BY name");
  std::string all;
  while (q.executeStep()) {
    int64_t rows = 0;
    std::string table = q.getColumn(0).getString();
    all += table + ":" + project::table_checksum(s, table, rows) + "\n";
  }
  return all;
}

int64_t sql_int(const std::string &path, const std::string &sql) {
  store::Store s(path, store::Config{});
  return s.db().execAndGet(sql).getInt64();
}

const char *kSession = R"({"id":"s","payload":{"agent_id":"a"}})";

} // namespace

TEST_CASE("state: the main branch folds prompts, ops, decisions, files and tools") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(kSession);
  Stored prompt = add(db, "s", "UserPromptSubmitted", R"({"text":"fix it"})");
  Stored ops = add(db, "s", "StateUpdated",
                   R"({"ops":[{"op":"set_plan","steps":["look","fix"]},
                       {"op":"add_fact","content":"flaky","confidence":0.5}]})");
  add(db, "s", "FileWritten", R"({"path":"src/a.c"})");
  add(db, "s", "AssistantMessageCreated",
      R"({"content":[{"type":"tool_call","id":"c1","name":"sh","args":{}}]})");
  std::string doc = state_of(db, "s");
  simdjson::dom::parser p;
  simdjson::dom::element s = p.parse(doc)["state"];
  CHECK(s["goal"]["request"]["event_id"].get_string().value() == prompt.id);
  CHECK(s["plan"]["steps"].get_array().size() == 2);
  CHECK(s["facts"].at(0)["event_id"].get_string().value() == ops.id);
  CHECK(s["files"]["modified"].at(0)["path"].get_string().value() == "src/a.c");
  CHECK(s["tool_state"]["pending"].at(0)["id"].get_string().value() == "c1");
  CHECK(p.parse(doc)["seq"].get_int64().value() == 5);
  // The same document by branch id, and as time travel to the leaf.
  std::string main_id(p.parse(doc)["branch_id"].get_string().value());
  CHECK(db.state("s", main_id, std::nullopt) == doc);
  std::string leaf(p.parse(doc)["event_id"].get_string().value());
  CHECK(db.state("s", std::nullopt, leaf) == doc);
}

TEST_CASE("state: errors name what was wrong") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(kSession);
  db.session_create(R"({"id":"t","payload":{"agent_id":"a"}})");
  Stored other = add(db, "t", "Note", "{}");
  CHECK(code_of([&] { db.state("nope", std::nullopt, std::nullopt); }) == Code::kNotFound);
  CHECK(code_of([&] { db.state("s", "nobranch", std::nullopt); }) == Code::kNotFound);
  CHECK(code_of([&] { db.state("s", std::nullopt, "evt_missing"); }) == Code::kNotFound);
  CHECK(code_of([&] { db.state("s", "main", other.id); }) == Code::kInvalidArg);
  try {
    db.state("s", std::nullopt, other.id);
    FAIL("an event of another session was accepted");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kInvalidArg);
    CHECK(std::string(e.what()).find("belongs to session 't'") != std::string::npos);
  }
  CHECK(code_of([&] { db.stats("nope"); }) == Code::kNotFound);
}

TEST_CASE("state: a rejected op leaves every table as it was") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  Engine db(path, "");
  db.session_create(kSession);
  add(db, "s", "StateUpdated", R"({"ops":[{"op":"set_plan","steps":["a"]}]})");
  std::string before = file_digest(path);
  std::string state_before = state_of(db, "s");
  struct Case {
    const char *payload, *message;
  } cases[] = {
      {R"({"ops":[{"op":"set_step","step":1}]})", "ops[0] (set_step): step 1 is outside the plan"},
      {R"({"ops":[{"op":"add_fact","content":"x"},{"op":"resolve_question","id":"q9"}]})",
       "ops[1] (resolve_question): question 'q9' is not open"},
      {R"({"ops":[{"op":"add_constraint"}]})", "missing required field 'text'"},
      {R"({"ops":[{"op":"set_step","step":"0"}]})", "payload.ops[0].step"},
      {R"({"ops":[{"op":"set_task","text":"t","typo":1}]})", "unknown field 'payload.ops[0].typo'"},
  };
  for (const Case &c : cases) {
    INFO(c.payload);
    try {
      add(db, "s", "StateUpdated", c.payload);
      FAIL("accepted");
    } catch (const Error &e) {
      CHECK(e.code() == Code::kInvalidArg);
      CHECK(std::string(e.what()).find(c.message) != std::string::npos);
    }
    // In a batch, the good events before the bad one go too.
    std::string batch = R"({"type":"FileWritten","actor":"a","payload":{"path":"x"}})"
                        "\n"
                        R"({"type":"StateUpdated","actor":"a","payload":)" +
                        std::string(c.payload) + "}";
    CHECK(code_of([&] { db.append_batch("s", batch); }) == Code::kInvalidArg);
    CHECK(file_digest(path) == before);
    CHECK(state_of(db, "s") == state_before);
  }
  // The projection kept nothing of the failed appends in memory either.
  add(db, "s", "StateUpdated", R"({"ops":[{"op":"set_task","text":"t"}]})");
  CHECK(strings_at(state_of(db, "s"), "/state/files/modified", "path").empty());
}

TEST_CASE("state: a fork inherits its fork point; siblings and ancestors stay apart") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(kSession);
  add(db, "s", "StateUpdated", R"({"ops":[{"op":"add_fact","content":"base"}]})");
  Stored fork_point = add(db, "s", "FileWritten", R"({"path":"base.c"})");
  add(db, "s", "FileWritten", R"({"path":"main-only.c"})");
  std::string main_before = state_of(db, "s");
  // An implicit fork (parent is not a leaf) and a named BranchCreated one.
  Stored a =
      add(db, "s", "FileWritten", R"({"path":"a.c"})", R"("parent_id":")" + fork_point.id + R"(")");
  Stored b = add(db, "s", "BranchCreated",
                 R"({"fork_event_id":")" + fork_point.id + R"(","kind":"what_if","name":"b"})");
  add(db, "s", "StateUpdated", R"({"ops":[{"op":"add_fact","content":"only b"}]})",
      R"("branch_id":"b")");
  add(db, "s", "FileWritten", R"({"path":"a2.c"})", R"("branch_id":")" + a.branch_id + R"(")");
  CHECK(a.branch_id != b.branch_id);
  CHECK(state_of(db, "s") == main_before); // invariant 9
  auto files_a = strings_at(state_of(db, "s", a.branch_id), "/state/files/modified", "path");
  auto files_b = strings_at(state_of(db, "s", "b"), "/state/files/modified", "path");
  CHECK(files_a == std::vector<std::string>{"a.c", "a2.c", "base.c"});
  CHECK(files_b == std::vector<std::string>{"base.c"});
  CHECK(strings_at(state_of(db, "s", "b"), "/state/facts", "content") ==
        std::vector<std::string>{"base", "only b"});
  CHECK(strings_at(state_of(db, "s", a.branch_id), "/state/facts", "content") ==
        std::vector<std::string>{"base"});
  // A rule is checked against the branch's own state: q is open only on b.
  add(db, "s", "StateUpdated", R"({"ops":[{"op":"open_question","text":"?","id":"q"}]})",
      R"("branch_id":"b")");
  CHECK(code_of([&] {
          add(db, "s", "StateUpdated", R"({"ops":[{"op":"resolve_question","id":"q"}]})",
              R"("branch_id":")" + a.branch_id + R"(")");
        }) == Code::kInvalidArg);
  add(db, "s", "StateUpdated", R"({"ops":[{"op":"resolve_question","id":"q"}]})",
      R"("branch_id":"b")");
  CHECK(db.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
}

TEST_CASE("state: a fork inside a batch starts from events not yet written") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(kSession);
  std::string batch;
  for (int i = 0; i < 40; ++i)
    batch += R"({"id":"e)" + std::to_string(i) +
             R"(","type":"FileWritten","actor":"a","payload":{"path":"f)" + std::to_string(i) +
             R"("}})" + "\n";
  // Forks at events 38 (not yet written when the fork is placed) and 5.
  batch += R"({"type":"Note","actor":"a","payload":{},"parent_id":"e38"})"
           "\n";
  batch += R"({"type":"Note","actor":"a","payload":{},"parent_id":"e5"})"
           "\n";
  db.append_batch("s", batch);
  int64_t cursor = 0;
  std::vector<Stored> events;
  for (const std::string &row : db.events_page("s", cursor, -1, 100)) events.push_back(stored(row));
  REQUIRE(events.size() == 43);
  CHECK(
      strings_at(state_of(db, "s", events[41].branch_id), "/state/files/modified", "path").size() ==
      39);
  CHECK(
      strings_at(state_of(db, "s", events[42].branch_id), "/state/files/modified", "path").size() ==
      6);
  CHECK(db.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
}

TEST_CASE("state: long branches get snapshots, and time travel reads them") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  Engine db(path, "");
  db.session_create(kSession);
  std::string batch;
  for (int i = 0; i < 1000; ++i)
    batch += R"({"type":"StateUpdated","actor":"a","payload":{"ops":[{"op":"set_task","text":"t)" +
             std::to_string(i) + R"("}]}})" + "\n";
  db.append_batch("s", batch);
  int64_t snapshots = sql_int(path, "SELECT COUNT(*) FROM state_snapshots");
  CHECK(snapshots == 1001 / project::kSnapshotEvery);
  int64_t first = sql_int(path, "SELECT MIN(seq) FROM state_snapshots");
  CHECK(first == project::kSnapshotEvery);
  // Time travel to just after the first snapshot starts from it: a changed
  // snapshot shows (and only rebuild --check objects).
  int64_t cursor = first;
  Stored after = stored(db.events_page("s", cursor, -1, 1).at(0));
  std::string honest = db.state("s", std::nullopt, after.id);
  {
    store::Store s(path, store::Config{});
    s.db().exec(
        R"(UPDATE state_snapshots SET state=ctxdb_zstd(replace(ctxdb_unzstd(state),'"user_goal":null',)"
        R"('"user_goal":{"text":"tampered","event_id":"x"}')) WHERE seq=)" +
        std::to_string(first));
  }
  std::string travelled = db.state("s", std::nullopt, after.id);
  CHECK(travelled != honest);
  CHECK(code_of([&] { db.rebuild(R"({"check":true})"); }) == Code::kCheckFailed);
  db.rebuild("");
  CHECK(db.state("s", std::nullopt, after.id) == honest);
}

// The first snapshot of branch 1: how it is stored, and its JSON.
struct StoredSnapshot {
  std::string type, json;
  int64_t bytes = 0, seq = 0;
};

StoredSnapshot first_snapshot(const std::string &path) {
  store::Store s(path, store::Config{});
  SQLite::Statement q(s.db(), "SELECT typeof(state),ctxdb_unzstd(state),length(state),seq FROM "
                              "state_snapshots WHERE branch_no=1 ORDER BY seq LIMIT 1");
  REQUIRE(q.executeStep());
  return {q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt64(),
          q.getColumn(3).getInt64()};
}

// An agent that has read and written many files: a state of many KB.
void add_busy_agent(Engine &db) {
  db.session_create(kSession);
  std::string batch;
  for (int i = 0; i < 600; ++i) {
    std::string n = std::to_string(i);
    batch += R"({"type":"FileWritten","actor":"a","payload":{"path":"src/module_)" + n +
             R"(.py","change_summary":"fix the parser of module )" + n + R"("}})" + "\n";
    batch += R"({"type":"StateUpdated","actor":"a","payload":{"ops":[{"op":"add_fact",)"
             R"("content":"module )" +
             n + R"( reads emails case-sensitively","confidence":0.9}]}})" + "\n";
  }
  db.append_batch("s", batch);
}

// A file holding one busy agent's session, open.
struct BusyAgent {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  Engine db{path, ""};
  BusyAgent() { add_busy_agent(db); }
};

// The state right after the event at `seq` on main.
std::string state_after(Engine &db, int64_t seq) {
  int64_t cursor = seq - 1;
  return db.state("s", std::nullopt, stored(db.events_page("s", cursor, -1, 1).at(0)).id);
}

TEST_CASE("state: snapshots are stored as zstd frames of their JSON") {
  BusyAgent f;
  std::string &path = f.path;
  Engine &db = f.db;
  StoredSnapshot snap = first_snapshot(path);
  CHECK(snap.type == "blob");
  // The frame holds exactly the state time travel returns there, in an
  // eighth or less.
  simdjson::dom::parser p, r;
  std::string api = json::canonical(p.parse(state_after(db, snap.seq))["state"].value());
  CHECK(json::canonical(r.parse(snap.json).value()) == api);
  CHECK(snap.json.size() > 10000);
  CHECK(snap.bytes * 8 < int64_t(snap.json.size()));
  CHECK(sql_int(path, "SELECT count(*) FROM state_snapshots WHERE typeof(state)<>'blob' OR "
                      "json_valid(ctxdb_unzstd(state))=0") == 0);
  CHECK(sql_int(path, "SELECT count(*) FROM state_snapshots") == 1201 / project::kSnapshotEvery);
  // The branch's current row stays JSON.
  CHECK(sql_int(path, "SELECT json_valid(state) FROM state WHERE branch_no=1") == 1);
}

TEST_CASE("state: a snapshot that does not decompress is reported as corrupt, by branch and seq") {
  BusyAgent f;
  std::string &path = f.path;
  Engine &db = f.db;
  int64_t seq = first_snapshot(path).seq;
  std::string before = state_after(db, seq + 5);
  // Not a frame; a frame header claiming far more than its bytes hold; a
  // frame cut short; a skippable frame; the state's JSON left uncompressed
  // (as text, it must not hash like the frame that decompresses to it); a
  // sound frame of JSON that is not a state.
  for (const char *forged :
       {"x'00112233'", "x'28b52ffd' || zeroblob(8)", "substr(state, 1, length(state) - 9)",
        "x'502a4d1800000000'", "ctxdb_unzstd(state)", "ctxdb_zstd('{}')"}) {
    CAPTURE(forged);
    test::raw_sql(path, std::string("UPDATE state_snapshots SET state=") + forged +
                            " WHERE branch_no=1 AND seq=" + std::to_string(seq));
    Engine reopened(path, "");
    try {
      state_after(reopened, seq + 5);
      FAIL("a forged snapshot was read");
    } catch (const Error &e) {
      CHECK(e.code() == Code::kCorrupt);
      CHECK(std::string(e.what()).find("the state snapshot of branch 1 at seq " +
                                       std::to_string(seq)) != std::string::npos);
    }
    // rebuild finds the row differs and writes it again from the log.
    CHECK(code_of([&] { reopened.rebuild(R"({"check":true})"); }) == Code::kCheckFailed);
    reopened.rebuild("");
    CHECK(state_after(reopened, seq + 5) == before);
  }
}

TEST_CASE("state: a damaged state row is reported by branch, and rebuild repairs it") {
  BusyAgent f;
  std::string before = state_of(f.db, "s");
  test::raw_sql(f.path, "UPDATE state SET state='garbage' WHERE branch_no=1");
  Engine reopened(f.path, "");
  std::string error = test::message_of([&] { add(reopened, "s", "FileRead", R"({"path":"x"})"); });
  CHECK(error.find("the state row of branch 1 is not a stored agent state: not JSON") == 0);
  CHECK(code_of([&] { reopened.rebuild(R"({"check":true})"); }) == Code::kCheckFailed);
  reopened.rebuild("");
  CHECK(state_of(reopened, "s") == before);
}

TEST_CASE("state: a failed rebuild --check leaves the next append folding onto the file's rows") {
  // The same tampered row, with and without a failed --check first: the
  // check rolls back, and what it replayed must go with it.
  auto modified_after_append = [](bool check_first) {
    test::TempDir dir;
    std::string path = dir.file("a.ctxdb");
    {
      Engine db(path, "");
      db.session_create(kSession);
      add(db, "s", "FileWritten", R"({"path":"one"})");
    }
    test::raw_sql(path, R"(UPDATE state SET state=replace(state,'"one"','"tampered"'))");
    Engine db(path, "");
    if (check_first) CHECK(code_of([&] { db.rebuild(R"({"check":true})"); }) == Code::kCheckFailed);
    add(db, "s", "FileWritten", R"({"path":"two"})");
    return strings_at(state_of(db, "s"), "/state/files/modified", "path");
  };
  std::vector<std::string> without = modified_after_append(false);
  CHECK(without == std::vector<std::string>{"tampered", "two"});
  CHECK(modified_after_append(true) == without);
}

TEST_CASE("state: a rebuild of more branches than it keeps in memory reads them back") {
  // 1100 sessions written round-robin, twice: the replay touches more
  // branches than one transaction keeps (1024), so it writes states early
  // and reads them back when their sessions come again.
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  Engine db(path, "");
  constexpr int kSessions = 1100;
  for (int i = 0; i < kSessions; ++i)
    db.session_create(R"({"id":"s)" + std::to_string(i) + R"(","payload":{"agent_id":"a"}})");
  for (const char *file : {"one", "two"})
    for (int i = 0; i < kSessions; ++i)
      add(db, "s" + std::to_string(i), "FileWritten",
          R"({"path":")" + std::string(file) + std::to_string(i) + R"("})");
  CHECK(db.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
  for (int i : {0, 700, kSessions - 1})
    CHECK(strings_at(state_of(db, "s" + std::to_string(i)), "/state/files/modified", "path") ==
          std::vector<std::string>{"one" + std::to_string(i), "two" + std::to_string(i)});
}

TEST_CASE("state: rebuild compares snapshots by their JSON, not by their frames") {
  BusyAgent f;
  std::string &path = f.path;
  Engine &db = f.db;
  // Another zstd (a level, a version) writes other bytes for the same JSON:
  // that is no difference.
  StoredSnapshot snap = first_snapshot(path);
  util::ZstdCompressor other(19);
  std::string frame(other.compress(snap.json));
  {
    store::Store s(path, store::Config{});
    SQLite::Statement q(s.db(), "UPDATE state_snapshots SET state=? WHERE branch_no=1 AND seq=? "
                                "AND state<>?");
    q.bind(1, frame.data(), int(frame.size()));
    q.bind(2, snap.seq);
    q.bind(3, frame.data(), int(frame.size()));
    REQUIRE(q.exec() == 1);
  }
  CHECK(db.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
  CHECK(first_snapshot(path).json == snap.json);
}

TEST_CASE("state: migration 016 compresses the snapshots a file already holds") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  std::string before;
  int64_t seq = 0;
  {
    Engine db(path, "");
    add_busy_agent(db);
    seq = first_snapshot(path).seq;
    before = state_after(db, seq + 5);
  }
  test::raw_sql(path, test::kBeforeSchema16 + "PRAGMA user_version = 15;");
  int64_t snapshots = 1201 / project::kSnapshotEvery;
  CHECK(test::raw_int(path, "SELECT count(*) FROM state_snapshots WHERE typeof(state)='text'") ==
        snapshots);
  Engine reopened(path, "");
  CHECK(test::raw_int(path, "PRAGMA user_version") == store::schema_version());
  CHECK(test::raw_int(path, "SELECT count(*) FROM state_snapshots WHERE typeof(state)='blob'") ==
        snapshots);
  CHECK(state_after(reopened, seq + 5) == before);
  CHECK(reopened.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
}

TEST_CASE("state: a frame is decompressed only to the size its header records and can hold") {
  util::ZstdCompressor pack;
  util::ZstdDecompressor unpack;
  std::string json(5000, 'x');
  CHECK(unpack.decompress(pack.compress(json), "a round trip") == json);
  auto message = [&](std::string_view frame) -> std::string {
    try {
      unpack.decompress(frame, "the forged frame");
    } catch (const Error &e) {
      CHECK(e.code() == Code::kCorrupt);
      return e.what();
    }
    return "decompressed";
  };
  // Magic, a header recording 1 GiB of content, an empty raw block: a
  // forged size must not be allocated.
  const char huge[] = "\x28\xb5\x2f\xfd\xe0\x00\x00\x00\x40\x00\x00\x00\x00\x00\x00\x00";
  CHECK(message(std::string_view(huge, sizeof huge - 1)) ==
        "the forged frame claims 1073741824 bytes, more than its frame can hold");
  CHECK(message("{\"not\":\"a frame\"}") ==
        "the forged frame is not a zstd frame that records its size");
  // A skippable frame (magic 0x184D2A50, no content) records a size of 0:
  // it is not a frame of ours, not an empty value.
  CHECK(message(std::string_view("\x50\x2a\x4d\x18\x00\x00\x00\x00", 8)) ==
        "the forged frame is not a zstd frame that records its size");
  // 8 MiB claimed by 64 bytes: their densest blocks (4-byte RLE blocks of
  // 128 KiB each) hold 2 MiB at most.
  std::string dense("\x28\xb5\x2f\xfd\xe0", 5); // magic; single segment, 8-byte size
  for (int i = 0; i < 8; ++i) dense.push_back(char(((128ull << 10) * 64) >> (8 * i)));
  dense.resize(64, '\0');
  CHECK(message(dense) == "the forged frame claims 8388608 bytes, more than its frame can hold");
  std::string frame(pack.compress(json));
  CHECK(message(std::string_view(frame).substr(0, frame.size() - 4))
            .find("the forged frame does not decompress to its 5000 bytes") == 0);
}

TEST_CASE("state: ctxdb_zstd and ctxdb_unzstd round-trip, keep NULL, and name a bad frame") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  Engine db(path, "");
  store::Store s(path, store::Config{});
  CHECK(s.db().execAndGet("SELECT ctxdb_unzstd(ctxdb_zstd('{\"a\":1}'))").getString() ==
        R"({"a":1})");
  CHECK(s.db()
            .execAndGet("SELECT ctxdb_unzstd(NULL) IS NULL AND ctxdb_zstd(NULL) IS NULL")
            .getInt() == 1);
  // With a second argument, what to give instead of failing.
  CHECK(s.db().execAndGet("SELECT ctxdb_unzstd('not a frame', 'otherwise')").getString() ==
        "otherwise");
  try {
    s.db().execAndGet("SELECT ctxdb_unzstd('not a frame')");
    FAIL("garbage decompressed");
  } catch (const SQLite::Exception &e) {
    CHECK(std::string(e.what()).find("ctxdb_unzstd's argument is not a zstd frame") !=
          std::string::npos);
  }
}

TEST_CASE("state: appends through another connection are folded in, not overwritten") {
  test::TempDir dir;
  std::string path = dir.file("a.ctxdb");
  Engine a(path, "");
  a.session_create(kSession);
  add(a, "s", "FileWritten", R"({"path":"one"})");
  Engine b(path, "");
  add(b, "s", "FileWritten", R"({"path":"two"})");
  add(a, "s", "FileWritten", R"({"path":"three"})"); // a's cached state is stale here
  CHECK(strings_at(state_of(b, "s"), "/state/files/modified", "path") ==
        std::vector<std::string>{"one", "three", "two"});
  CHECK(a.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
}

TEST_CASE("state_query: a query document picks the branch or the event") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(kSession);
  Stored p = add(db, "s", "UserPromptSubmitted", R"({"text":"one"})");
  add(db, "s", "UserPromptSubmitted", R"({"text":"two"})");
  CHECK(db.state_query("s", "") == db.state("s", std::nullopt, std::nullopt));
  CHECK(db.state_query("s", "{}") == db.state("s", std::nullopt, std::nullopt));
  CHECK(db.state_query("s", R"({"branch_id":"main"})") == db.state("s", "main", std::nullopt));
  CHECK(db.state_query("s", R"({"at":")" + p.id + "\"}") == db.state("s", std::nullopt, p.id));
  CHECK(code_of([&] { db.state_query("s", "{"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { db.state_query("s", R"({"branch":"main"})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { db.state_query("s", R"({"at":1})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { db.state_query("s", R"({"branch_id":"main","at":"x"})"); }) ==
        Code::kInvalidArg);
}

} // namespace state_test
