// The session tree (DESIGN §3): parents filled from leaves, implicit and
// explicit forks, branch paths as range scans, children, child sessions,
// and invariant 9 (a branch never changes its ancestors).
#include "engine.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>
#include <vector>

namespace tree_test {

using namespace ctxdb;
using test::code_of;
using test::field;

namespace {

std::string prompt(const std::string &text, const std::string &extra = "") {
  return R"({"type":"UserPromptSubmitted","actor":"user",)" + extra + R"("payload":{"text":")" +
         text + R"("}})";
}

// The ids of a branch's path, root→leaf, read in pages of 2.
std::vector<std::string> path_ids(Engine &db, const std::string &session,
                                  std::optional<std::string_view> branch) {
  std::vector<std::string> ids;
  int64_t cursor = 0;
  for (;;) {
    auto rows = db.path_page(session, branch, cursor, 2);
    for (auto &r : rows) ids.push_back(field(r, "id"));
    if (rows.size() < 2) return ids;
  }
}

std::vector<std::string> ids_of(const std::string &array, const char *key = "id") {
  simdjson::dom::parser p;
  std::vector<std::string> out;
  for (simdjson::dom::element e : p.parse(array).get_array())
    out.emplace_back(e[key].get_string().value());
  return out;
}

struct Fixture {
  test::TempDir dir;
  Engine db{dir.file("t.ctxdb"), ""};
  std::string session = field(db.session_create(R"({"id":"s1","event_id":"e0",
    "payload":{"agent_id":"a"}})"),
                              "id");
  std::string add(const std::string &id, const std::string &extra = "") {
    return db.append(session, prompt(id, R"("id":")" + id + R"(",)" + extra));
  }
};

} // namespace

TEST_CASE("appends without a parent continue the main branch's leaf") {
  Fixture f;
  std::string e1 = f.add("e1");
  std::string e2 = f.add("e2");
  CHECK(field(e1, "parent_id") == "e0");
  CHECK(field(e2, "parent_id") == "e1");
  CHECK(field(e2, "branch_id") == "e0"); // main is named by SessionStarted
  CHECK(field(f.db.event_get("e2"), "branch_id") == "e0");
  auto branches = f.db.branch_list(f.session);
  CHECK(ids_of(branches) == std::vector<std::string>{"e0"});
  CHECK(path_ids(f.db, f.session, std::nullopt) == std::vector<std::string>{"e0", "e1", "e2"});
  CHECK(path_ids(f.db, f.session, "main") == path_ids(f.db, f.session, "e0"));
}

TEST_CASE("a parent that is not a leaf forks; the fork's path shares its ancestors") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  f.add("e3");
  std::string fork = f.add("f1", R"("parent_id":"e1",)");
  CHECK(field(fork, "branch_id") == "f1");
  f.add("e4"); // no branch named: main goes on
  std::string f2 = f.add("f2", R"("branch_id":"f1",)");
  CHECK(field(f2, "parent_id") == "f1");
  CHECK(path_ids(f.db, f.session, "f1") == std::vector<std::string>{"e0", "e1", "f1", "f2"});
  CHECK(path_ids(f.db, f.session, std::nullopt) ==
        std::vector<std::string>{"e0", "e1", "e2", "e3", "e4"});
  // A parent that is its branch's leaf continues that branch, named or not.
  CHECK(field(f.add("f3", R"("parent_id":"f2",)"), "branch_id") == "f1");
  std::string list = f.db.branch_list(f.session);
  CHECK(ids_of(list) == std::vector<std::string>{"e0", "f1"});
  simdjson::dom::parser p;
  simdjson::dom::element b = p.parse(list).at(1);
  CHECK(std::string_view(b["kind"]) == "fork");
  CHECK(std::string_view(b["parent_branch_id"]) == "e0");
  CHECK(std::string_view(b["fork_event_id"]) == "e1");
  CHECK(int64_t(b["fork_seq"]) == 2);
  CHECK(std::string_view(b["leaf_event_id"]) == "f3");
  CHECK(int64_t(b["event_count"]) == 3);
}

TEST_CASE("fork() opens a named branch with a BranchCreated event") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  std::string b =
      f.db.branch_fork(f.session, R"({"event_id":"e1","kind":"what_if","name":"try-b","id":"w"})");
  CHECK(field(b, "id") == "w");
  CHECK(field(b, "kind") == "what_if");
  CHECK(field(b, "name") == "try-b");
  CHECK(field(f.db.event_get("w"), "type") == "BranchCreated");
  CHECK(field(f.add("w1", R"("branch_id":"try-b",)"), "parent_id") == "w");
  CHECK(path_ids(f.db, f.session, "try-b") == std::vector<std::string>{"e0", "e1", "w", "w1"});
  // A fork of a fork: the path crosses two fork points.
  f.db.branch_fork(f.session, R"({"event_id":"w","name":"deeper","id":"d"})");
  f.add("d1", R"("branch_id":"d",)");
  CHECK(path_ids(f.db, f.session, "deeper") ==
        std::vector<std::string>{"e0", "e1", "w", "d", "d1"});

  SUBCASE("bad forks are rejected and write nothing") {
    std::string before = f.db.branch_list(f.session);
    CHECK(code_of([&] { f.db.branch_fork(f.session, R"({"event_id":"nope"})"); }) ==
          Code::kNotFound);
    CHECK(code_of([&] { f.db.branch_fork(f.session, R"({"event_id":"e1","kind":"x"})"); }) ==
          Code::kInvalidArg);
    CHECK(code_of([&] { f.db.branch_fork(f.session, R"({"name":"n"})"); }) == Code::kInvalidArg);
    CHECK(code_of([&] { f.db.branch_fork(f.session, "{"); }) == Code::kInvalidJson);
    CHECK(code_of([&] { f.db.branch_fork("nope", R"({"event_id":"e1"})"); }) == Code::kNotFound);
    CHECK(f.db.branch_list(f.session) == before);
  }
}

TEST_CASE("parents and branches that do not fit are rejected, and nothing is written") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  f.db.session_create(R"({"id":"s2","event_id":"x0","payload":{"agent_id":"a"}})");
  std::string log_before = field(f.db.session_get(f.session), "event_count");
  // A stale parent for a named branch: someone appended first.
  CHECK(code_of([&] { f.add("n1", R"("branch_id":"main","parent_id":"e1",)"); }) ==
        Code::kConflict);
  CHECK(code_of([&] { f.add("n2", R"("parent_id":"x0",)"); }) == Code::kNotFound);
  CHECK(code_of([&] { f.add("n3", R"("parent_id":"ghost",)"); }) == Code::kNotFound);
  CHECK(code_of([&] { f.add("n4", R"("branch_id":"ghost",)"); }) == Code::kNotFound);
  // BranchCreated's parent is its fork point.
  CHECK(code_of([&] {
          f.db.append(f.session, R"({"type":"BranchCreated","actor":"h","parent_id":"e2",
            "payload":{"fork_event_id":"e1","kind":"fork"}})");
        }) == Code::kInvalidArg);
  // A batch with one bad line writes none of its lines.
  CHECK(code_of([&] {
          f.db.append_batch(f.session, prompt("ok", R"("id":"b1",)") + "\n" +
                                           prompt("bad", R"("parent_id":"ghost",)"));
        }) == Code::kNotFound);
  CHECK(field(f.db.session_get(f.session), "event_count") == log_before);
  CHECK(ids_of(f.db.branch_list(f.session)) == std::vector<std::string>{"e0"});
  // Two branches with one name: the name no longer picks one.
  f.db.branch_fork(f.session, R"({"event_id":"e1","name":"alt","id":"a1"})");
  f.db.branch_fork(f.session, R"({"event_id":"e1","name":"alt","id":"a2"})");
  CHECK(code_of([&] { f.add("n5", R"("branch_id":"alt",)"); }) == Code::kInvalidArg);
  CHECK(field(f.add("n6", R"("branch_id":"a2",)"), "branch_id") == "a2");
}

TEST_CASE("a batch can fork and continue the fork in one transaction") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  std::string batch = prompt("b1", R"("id":"b1","parent_id":"e1",)") + "\n" +
                      prompt("b2", R"("id":"b2","branch_id":"b1",)") + "\n" +
                      prompt("m3", R"("id":"m3",)") + "\n" +
                      prompt("b3", R"("id":"b3","parent_id":"b2",)");
  f.db.append_batch(f.session, batch);
  CHECK(path_ids(f.db, f.session, "b1") == std::vector<std::string>{"e0", "e1", "b1", "b2", "b3"});
  CHECK(path_ids(f.db, f.session, "main") == std::vector<std::string>{"e0", "e1", "e2", "m3"});
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("children of an event: the next on its branch, forks, spawned sessions") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  f.add("f1", R"("parent_id":"e1",)");
  f.db.session_create(R"({"id":"child","event_id":"c0","payload":{"agent_id":"sub",
    "parent_session_id":"s1","spawned_by_event_id":"e1"}})");
  std::string kids = f.db.event_children("e1");
  CHECK(ids_of(field(kids, "events")) == std::vector<std::string>{"e2", "f1"});
  CHECK(ids_of(field(kids, "sessions")) == std::vector<std::string>{"child"});
  CHECK(field(f.db.session_get("child"), "parent_session_id") == "s1");
  CHECK(field(f.db.event_children("e2"), "events") == "[]");
  CHECK(code_of([&] { f.db.event_children("ghost"); }) == Code::kNotFound);

  SUBCASE("a child session must name a real parent and spawner") {
    auto create = [&](const std::string &extra) {
      return code_of(
          [&] { f.db.session_create(R"({"id":"c2","payload":{"agent_id":"a",)" + extra + "}}"); });
    };
    CHECK(create(R"("parent_session_id":"ghost")") == Code::kNotFound);
    CHECK(create(R"("parent_session_id":"s1","spawned_by_event_id":"ghost")") == Code::kNotFound);
    CHECK(create(R"("parent_session_id":"s1","spawned_by_event_id":"c0")") == Code::kNotFound);
    CHECK(create(R"("spawned_by_event_id":"e1")") == Code::kInvalidArg);
    CHECK(code_of([&] { f.db.session_get("c2"); }) == Code::kNotFound);
  }
}

TEST_CASE("a long branch is a few runs, and its path reads stay range scans") {
  Fixture f;
  std::string batch;
  for (int i = 1; i <= 500; ++i)
    batch += prompt("m", R"("id":"m)" + std::to_string(i) + R"(",)") + "\n";
  f.db.append_batch(f.session, batch);
  f.db.branch_fork(f.session, R"({"event_id":"m250","id":"w"})");
  for (int i = 1; i <= 100; ++i) f.add("w" + std::to_string(i), R"("branch_id":"w",)");
  f.add("m501");
  auto path = path_ids(f.db, f.session, "w");
  REQUIRE(path.size() == 1 + 250 + 1 + 100);
  CHECK(path[250] == "m250");
  CHECK(path[251] == "w");
  CHECK(path.back() == "w100");
  CHECK(path_ids(f.db, f.session, "main").size() == 502);
  // The tree's own tables: three runs (main, w, main again).
  CHECK(field(f.db.rebuild(""), "identical") == "true");
  std::string report = f.db.rebuild(R"({"check":true})");
  simdjson::dom::parser p;
  for (simdjson::dom::element t : p.parse(report)["tables"].get_array())
    if (std::string_view(t["table"]) == "branch_runs") CHECK(int64_t(t["rows"]) == 3);
}

TEST_CASE("a branch never changes its ancestors (invariant 9)") {
  Fixture f;
  for (int i = 1; i <= 5; ++i) f.add("e" + std::to_string(i));
  std::vector<std::string> before;
  for (int i = 0; i <= 5; ++i) before.push_back(f.db.event_get("e" + std::to_string(i)));
  auto main_before = path_ids(f.db, f.session, "main");
  f.add("f1", R"("parent_id":"e2",)");
  f.db.branch_fork(f.session, R"({"event_id":"e3","kind":"subagent","id":"s"})");
  f.add("s1", R"("branch_id":"s",)");
  for (int i = 0; i <= 5; ++i) CHECK(f.db.event_get("e" + std::to_string(i)) == before[size_t(i)]);
  CHECK(path_ids(f.db, f.session, "main") == main_before);
  CHECK(field(f.db.verify(std::nullopt), "ok") == "true");
}

TEST_CASE("an identical retry without a parent returns the stored event") {
  Fixture f;
  std::string first = f.add("r1");
  f.add("e2");
  // The retry's parent would now be e2's leaf; it is the same event.
  CHECK(f.add("r1") == first);
  CHECK(code_of([&] { f.add("r1", R"("parent_id":"e2",)"); }) == Code::kConflict);
}

TEST_CASE("export and import carry the tree; a wrong branch_id is corruption") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  f.add("f1", R"("parent_id":"e1",)");
  std::string dump;
  int64_t cursor = 0;
  for (auto &r : f.db.events_page(std::nullopt, cursor, -1, 100)) dump += r + "\n";
  test::TempDir dir2;
  Engine copy(dir2.file("c.ctxdb"), "");
  copy.import(dump);
  CHECK(copy.branch_list("s1") == f.db.branch_list("s1"));
  std::string tampered = dump;
  size_t at = tampered.find(R"("branch_id":"f1")");
  REQUIRE(at != std::string::npos);
  tampered.replace(at, 16, R"("branch_id":"e0")");
  test::TempDir dir3;
  Engine other(dir3.file("o.ctxdb"), "");
  CHECK(code_of([&] { other.import(tampered); }) == Code::kCorrupt);
  CHECK(other.session_list() == "[]");
}

TEST_CASE("\"main\" names the main branch even when a fork has the id main") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  f.db.branch_fork(f.session, R"({"event_id":"e1","id":"main","name":"side"})");
  CHECK(path_ids(f.db, f.session, "main") == std::vector<std::string>{"e0", "e1", "e2"});
  std::string e3 = f.add("e3", R"("branch_id":"main",)");
  CHECK(field(e3, "branch_id") == "e0");
  CHECK(field(e3, "parent_id") == "e2");
  CHECK(path_ids(f.db, f.session, "side") == std::vector<std::string>{"e0", "e1", "main"});
}

TEST_CASE("a retry that names another branch than its event's is a conflict") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  f.db.branch_fork(f.session, R"({"event_id":"e1","id":"w","name":"alt"})");
  std::string first = f.add("r1", R"("branch_id":"alt",)");
  CHECK(field(first, "branch_id") == "w");
  CHECK(f.add("r1", R"("branch_id":"alt",)") == first); // the same: identical
  CHECK(f.add("r1", R"("branch_id":"w",)") == first);   // by id: identical
  CHECK(f.add("r1") == first);                          // no branch named: identical
  CHECK(code_of([&] { f.add("r1", R"("branch_id":"main",)"); }) == Code::kConflict);
  CHECK(code_of([&] { f.add("r1", R"("branch_id":"ghost",)"); }) == Code::kNotFound);
}

TEST_CASE("a path read by pages keeps the branch its first page named") {
  Fixture f;
  f.add("e1");
  f.add("e2");
  f.db.branch_fork(f.session, R"({"event_id":"e1","id":"a1","name":"alt"})");
  f.add("a2", R"("branch_id":"a1",)");
  f.add("a3", R"("branch_id":"a1",)");
  int64_t no = f.db.path_branch(f.session, "alt");
  int64_t cursor = 0;
  std::vector<std::string> ids;
  auto page = [&] {
    for (auto &r : f.db.path_page(f.session, no, cursor, 2)) ids.push_back(field(r, "id"));
  };
  page();
  // Meanwhile other forks take the name (now ambiguous) and an id equal to it.
  f.db.branch_fork(f.session, R"({"event_id":"e2","name":"alt"})");
  f.db.branch_fork(f.session, R"({"event_id":"e2","id":"alt"})");
  page();
  page();
  CHECK(ids == std::vector<std::string>{"e0", "e1", "a1", "a2", "a3"});
  CHECK(code_of([&] { f.db.path_branch(f.session, "nope"); }) == Code::kNotFound);
}

TEST_CASE("a ts that does not fit 64 bits is an error, not replaced by the clock") {
  Fixture f;
  f.add("e1");
  std::string huge = "18446744073709551615";
  std::string error = test::message_of(
      [&] { f.db.branch_fork(f.session, R"({"event_id":"e1","id":"w","ts":)" + huge + "}"); });
  CHECK(error == "field 'ts' must be an integer, not an integer past 64 signed bits");
  std::string append_error = test::message_of([&] { f.add("e2", R"("ts":)" + huge + ","); });
  CHECK(append_error == "field 'ts' must be an integer, not an integer past 64 signed bits");
  CHECK(code_of([&] { f.db.event_get("w"); }) == Code::kNotFound);
}

TEST_CASE("a fork at an unknown event or another session's names the fork point") {
  Fixture f;
  f.add("e1");
  f.db.session_create(R"({"id":"s2","event_id":"x0","payload":{"agent_id":"a"}})");
  for (const char *point : {"x0", "nope"}) {
    std::string error = test::message_of(
        [&] { f.db.branch_fork(f.session, std::string(R"({"event_id":")") + point + "\"}"); });
    CHECK(error == std::string("the fork point '") + point +
                       "' (fork_event_id) names no event of session 's1'");
  }
}

} // namespace tree_test
