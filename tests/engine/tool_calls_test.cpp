// The tool_calls projection: each call paired with its result on every
// branch path, and the rules checked at append (DESIGN §11 invariant 1).
#include "agent_events.hpp"
#include "engine.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tool_calls_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

struct Fixture : SessionFixture {
  // Appending `line` fails with `code`, naming `words`, and changes nothing.
  void rejects(const std::string &line, Code code, const std::string &words) {
    std::string before = snapshot(db);
    try {
      db.append("s", line);
      FAIL("accepted: " << line);
    } catch (const Error &e) {
      CHECK(e.code() == code);
      CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
    }
    CHECK(snapshot(db) == before);
  }
};

} // namespace

TEST_CASE("tool_calls: a call is pending until its result, then success or error") {
  Fixture f;
  f.add(prompt("list files"));
  std::string made = f.add(call("c1"));
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"pending"});
  CHECK(field(items(f.calls())[0], "result") == "null");
  f.add(event("ToolCallStarted", "tool", R"({"tool_call_id":"c1"})"));
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"pending"});

  std::string done = f.add(event(
      "ToolCallFinished", "tool",
      R"({"tool_call_id":"c1","output":"a.c","duration_ms":7,"exit_code":0,"artifact_id":"art_1"})"));
  std::string c1 = items(f.calls())[0];
  CHECK(field(c1, "call_id") == "c1");
  CHECK(field(c1, "name") == "bash");
  CHECK(field(c1, "args") == R"({"n":"c1"})");
  CHECK(field(c1, "event_id") == made);
  CHECK(field(c1, "status") == "success");
  std::string result = field(c1, "result");
  CHECK(field(result, "event_id") == done);
  CHECK(field(result, "duration_ms") == "7");
  CHECK(field(result, "exit_code") == "0");
  CHECK(field(result, "artifact_id") == "art_1");
  CHECK(field(result, "error") == "null");

  f.add(call("c2"));
  f.add(failed("c2"));
  f.add(call("c3"));
  f.add(event("ToolCallFinished", "tool", R"({"tool_call_id":"c3","is_error":true})"));
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"success", "error", "error"});
  CHECK(field(field(items(f.calls())[1], "result"), "error") == "timed out");
}

// A ToolCallCancelled closes a call that will get no result: its status,
// the state's pending calls, the message the model reads, and the rules a
// result keeps (its call on the path, one per path).
TEST_CASE("tool_calls: a cancelled call is closed everywhere it shows") {
  Fixture f;
  f.add(prompt("run it"));
  f.add(call("c1"));
  f.add(call("c2"));
  CHECK(f.db.state("s", std::nullopt, std::nullopt).find(R"("id":"c1")") != std::string::npos);
  std::string cancel = f.add(event("ToolCallCancelled", "host",
                                   R"({"tool_call_id":"c1","reason":"interrupted by the user"})"));
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"cancelled", "pending"});
  std::string result = field(items(f.calls())[0], "result");
  CHECK(field(result, "event_id") == cancel);
  CHECK(field(result, "error") == "interrupted by the user");
  std::string pending = field(
      field(field(f.db.state("s", std::nullopt, std::nullopt), "state"), "tool_state"), "pending");
  CHECK(column(pending, "id") == std::vector<std::string>{"c2"});
  std::string last = items(f.messages()).back();
  CHECK(field(last, "role") == "tool");
  std::string block = items(field(last, "blocks"))[0];
  CHECK(field(block, "status") == "cancelled");
  CHECK(field(block, "text") == "[tool call interrupted: no result (interrupted by the user)]");
  CHECK(std::stoll(field(last, "tokens")) > 0);
  // A result after it is a second result on the path; an unknown call has none.
  f.rejects(finished("c1"), Code::kConflict, "already has a result");
  f.rejects(event("ToolCallCancelled", "host", R"({"tool_call_id":"nope"})"), Code::kNotFound,
            "'nope' is unknown");
  f.rejects(event("ToolCallCancelled", "host", R"({"reason":"x"})"), Code::kInvalidArg,
            "tool_call_id");
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("tool_calls: every call of a message, in order, each with its own result") {
  Fixture f;
  f.add(event("AssistantMessageCreated", "assistant",
              R"({"content":[{"type":"tool_call","id":"a","name":"read","args":"x"},)"
              R"({"type":"text","text":"and"},{"type":"tool_call","id":"b","name":"grep"}]})"));
  f.add(finished("b"));
  CHECK(column(f.calls(), "call_id") == std::vector<std::string>{"a", "b"});
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"pending", "success"});
  CHECK(column(f.calls(), "args") == std::vector<std::string>{"x", "null"});
}

TEST_CASE("tool_calls: a result is rejected without its call on the same path") {
  Fixture f;
  std::string p = f.add(prompt("go"));
  std::string made = f.add(call("c1"));
  SUBCASE("an unknown call id (orphan)") {
    f.rejects(finished("nope"), Code::kNotFound, "tool call 'nope' is unknown");
    f.rejects(failed("nope"), Code::kNotFound, "ToolCallFailed");
  }
  SUBCASE("a second result on one path") {
    f.add(finished("c1"));
    f.rejects(finished("c1"), Code::kConflict, "already has a result on this branch's path");
    f.rejects(failed("c1"), Code::kConflict, "one result per path");
  }
  SUBCASE("a result whose call is on a sibling branch") {
    std::string fork = f.add(prompt("other way", after(p))); // p is not a leaf: a fork
    f.rejects(finished("c1", on(fork)), Code::kNotFound, "not on this event's path");
    CHECK(column(f.calls(), "status") == std::vector<std::string>{"pending"});
    CHECK(f.calls(fork.c_str()) == "[]");
  }
  SUBCASE("a call id used twice on one path") {
    f.rejects(call("c1"), Code::kConflict, "tool call id 'c1' is already used");
  }
  SUBCASE("a tool_call block without an id") {
    f.rejects(event("AssistantMessageCreated", "assistant",
                    R"({"content":[{"type":"tool_call","name":"bash"}]})"),
              Code::kInvalidArg, "content[0]");
  }
  CHECK(column(f.calls(), "event_id") == std::vector<std::string>{made});
}

TEST_CASE("tool_calls: a rejected batch changes nothing, and forgets its calls") {
  Fixture f;
  f.add(prompt("go"));
  std::string before = snapshot(f.db);
  std::string batch = call("c9") + "\n" + finished("c9") + "\n" + finished("c9") + "\n";
  CHECK(code_of([&] { f.db.append_batch("s", batch); }) == Code::kConflict);
  CHECK(snapshot(f.db) == before);
  // The rolled-back call is gone for the next append too.
  CHECK(code_of([&] { f.db.append("s", finished("c9")); }) == Code::kNotFound);
  f.db.append_batch("s", call("c9") + "\n" + finished("c9") + "\n");
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"success"});
}

TEST_CASE("tool_calls: a call made before a fork gets one result per path") {
  Fixture f;
  f.add(prompt("go"));
  std::string made = f.add(call("c1"));
  f.add(prompt("while it runs"));
  // A fork at the call: the call is on the fork's path.
  std::string fork_result = f.add(finished("c1", after(made)));
  std::string fork = fork_result; // the event that opens a fork names it
  CHECK(column(f.calls(fork.c_str()), "status") == std::vector<std::string>{"success"});
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"pending"});
  CHECK(column(f.calls("main"), "status") == std::vector<std::string>{"pending"});
  // main may still get its own result; each branch sees its own.
  std::string main_result = f.add(failed("c1"));
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"error"});
  CHECK(field(field(items(f.calls())[0], "result"), "event_id") == main_result);
  CHECK(field(field(items(f.calls(fork.c_str()))[0], "result"), "event_id") == fork_result);
  CHECK(field(field(items(f.calls(fork.c_str()))[0], "result"), "branch_id") == fork);
  f.rejects(finished("c1", on(fork)), Code::kConflict, "already has a result");
  // Sibling branches may reuse a call id: they are different histories.
  f.add(call("c2")); // main's leaf
  std::string other = f.add(call("c2", after(main_result)));
  f.add(finished("c2", on(other)));
  CHECK(column(f.calls(other.c_str()), "call_id") == std::vector<std::string>{"c1", "c2"});
  // c1 got its result on main before the fork, so `other` sees it too.
  CHECK(column(f.calls(other.c_str()), "status") == std::vector<std::string>{"error", "success"});
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"error", "pending"});
}

TEST_CASE("tool_calls: a named branch is read by its name") {
  Fixture f;
  std::string p = f.add(prompt("go"));
  f.add(event("BranchCreated", "host",
              R"({"fork_event_id":")" + p + R"(","kind":"what_if","name":"alt"})"));
  f.add(call("c1", on("alt")));
  CHECK(column(f.calls("alt"), "call_id") == std::vector<std::string>{"c1"});
  CHECK(f.calls() == "[]");
  CHECK(code_of([&] { f.calls("nope"); }) == Code::kNotFound);
  CHECK(code_of([&] { f.db.tool_calls("no_such_session", std::nullopt); }) == Code::kNotFound);
}

// SQL that takes the tool-call tables of a file back to schema 13: every
// result in tool_results, and the event ids copied into both tables.
constexpr char kToSchema13[] = R"(
CREATE TABLE calls13 (session_no INTEGER NOT NULL, seq INTEGER NOT NULL, idx INTEGER NOT NULL,
  branch_no INTEGER NOT NULL, call_id TEXT NOT NULL, event_id TEXT NOT NULL, name TEXT, args TEXT,
  PRIMARY KEY (session_no, seq, idx)) WITHOUT ROWID;
INSERT INTO calls13 SELECT c.session_no, c.seq, c.idx, c.branch_no, c.call_id, e.id, c.name, c.args
  FROM tool_calls c JOIN events e ON e.session_no = c.session_no AND e.seq = c.seq;
CREATE TABLE results13 (session_no INTEGER NOT NULL, seq INTEGER NOT NULL,
  call_seq INTEGER NOT NULL, call_idx INTEGER NOT NULL, branch_no INTEGER NOT NULL,
  event_id TEXT NOT NULL, status TEXT NOT NULL, artifact_id TEXT, error TEXT,
  duration_ms INTEGER, exit_code INTEGER, PRIMARY KEY (session_no, seq)) WITHOUT ROWID;
INSERT INTO results13 SELECT c.session_no, c.result_seq, c.seq, c.idx, c.result_branch_no, e.id,
  c.status, c.artifact_id, c.error, c.duration_ms, c.exit_code
  FROM tool_calls c JOIN events e ON e.session_no = c.session_no AND e.seq = c.result_seq;
INSERT INTO results13 SELECT r.session_no, r.seq, r.call_seq, r.call_idx, r.branch_no, e.id,
  r.status, r.artifact_id, r.error, r.duration_ms, r.exit_code
  FROM tool_results r JOIN events e ON e.session_no = r.session_no AND e.seq = r.seq;
DROP TABLE tool_calls;
DROP TABLE tool_results;
ALTER TABLE calls13 RENAME TO tool_calls;
ALTER TABLE results13 RENAME TO tool_results;
CREATE INDEX tool_calls_by_id ON tool_calls (session_no, call_id, branch_no);
CREATE INDEX tool_results_by_call ON tool_results (session_no, call_seq, call_idx, branch_no);
PRAGMA user_version = 13;
)";

TEST_CASE("tool_calls: a file of schema 13 opens with the same calls, results and statuses") {
  Fixture f;
  f.add(prompt("go"));
  std::string made = f.add(call("c1"));
  f.add(prompt("while it runs"));
  std::string fork = f.add(finished("c1", after(made))); // c1's first result, on the fork
  std::string main_result = f.add(failed("c1"));         // a further result, on main
  f.db.append_batch("s", call("c2") + "\n" +
                             event("ToolCallFinished", "tool",
                                   R"({"tool_call_id":"c2","duration_ms":3,"exit_code":1})") +
                             "\n" + call("c3") + "\n");
  std::string other = f.add(call("c2", after(main_result)));
  auto views = [](Engine &db, const std::string &fork_id, const std::string &other_id) {
    return db.tool_calls("s", std::nullopt) + db.tool_calls("s", fork_id) +
           db.tool_calls("s", other_id);
  };
  std::string before = views(f.db, fork, other);
  REQUIRE(raw_int(f.dir.file("s.ctxdb"), "SELECT count(*) FROM tool_results") == 1);
  raw_sql(f.dir.file("s.ctxdb"), kBeforeSchema15 + std::string(kToSchema13));
  REQUIRE(raw_int(f.dir.file("s.ctxdb"), "SELECT count(*) FROM tool_results") == 3);

  Engine reopened(f.dir.file("s.ctxdb"), "");
  CHECK(raw_int(f.dir.file("s.ctxdb"), "PRAGMA user_version") == store::schema_version());
  CHECK(views(reopened, fork, other) == before);
  // The fork's result came first: it is c1's row's; main's stays apart.
  CHECK(raw_int(f.dir.file("s.ctxdb"), "SELECT count(*) FROM tool_results") == 1);
  CHECK(field(reopened.rebuild(R"({"check":true})"), "identical") == "true");
  // Appends go on from the migrated rows: c3's result updates its row.
  reopened.append("s", finished("c3"));
  CHECK(column(reopened.tool_calls("s", std::nullopt), "status") ==
        std::vector<std::string>{"error", "success", "success"});
}

TEST_CASE("tool_calls: a batch of more calls than wait in memory pairs every result") {
  // 5000 calls, then their results, in one transaction: the first 4096
  // rows are written before their results come, which then update them.
  Fixture f;
  std::string batch;
  for (int i = 0; i < 5000; ++i) batch += call("k" + std::to_string(i)) + "\n";
  for (int i = 4999; i >= 0; --i) batch += finished("k" + std::to_string(i)) + "\n";
  f.db.append_batch("s", batch);
  std::vector<std::string> statuses = column(f.calls(), "status");
  REQUIRE(statuses.size() == 5000);
  CHECK(std::count(statuses.begin(), statuses.end(), "success") == 5000);
  CHECK(raw_int(f.dir.file("s.ctxdb"), "SELECT count(*) FROM tool_results") == 0);
  // A rebuild replays them in one transaction too, and gets the same rows.
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("tool_calls: a rebuild that fails before its replay leaves results appendable") {
  Fixture f;
  f.add(call("c1"));
  // Stands in for any failure between the rebuild's start and its replay
  // (a full disk while the tables are cleared): the rebuild has told the
  // projection to expect the whole log, which the rollback must undo.
  raw_sql(f.dir.file("s.ctxdb"), "CREATE TRIGGER block BEFORE DELETE ON branch_runs "
                                 "BEGIN SELECT RAISE(ABORT, 'blocked'); END;");
  CHECK_THROWS_WITH(f.db.rebuild(""), "blocked"); // SQLite's error (the ABI maps it)
  raw_sql(f.dir.file("s.ctxdb"), "DROP TRIGGER block;");
  f.add(event("ToolCallFinished", "tool", R"({"tool_call_id":"c1","output":"ok"})"));
  CHECK(column(f.calls(), "status") == std::vector<std::string>{"success"});
}

} // namespace tool_calls_test
