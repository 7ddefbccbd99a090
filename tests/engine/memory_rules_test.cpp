// Memories (DESIGN §7, invariants 10 and 11): the rules the other memory
// tests let through, each case written to kill a mutation of the code that
// enforces it (a mutation test of the governed-memory code, session 26).
#include "agent_events.hpp"
#include "bundle_checks.hpp"
#include "engine.hpp"
#include "memory_db.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace memory_rules_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

using Ids = std::vector<std::string>;

Ids sorted(Ids ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

// memory_db.hpp's, with the calls these tests make.
struct MemoryDb : test::MemoryDb {
  // An update stamped kT0 + `at`.
  std::string update(const std::string &id, const std::string &fields, int64_t at) {
    return db.memory_update(id, R"({"source_refs":["evt_src"],"ts":)" + std::to_string(kT0 + at) +
                                    fields + "}");
  }
  std::string retrieve(const std::string &query, const std::string &more = "",
                       int64_t now = kT0 + kDay) {
    return db.memory_retrieve(R"({"query":")" + query +
                              R"(","scopes":[{"scope":"project","id":"p1"}],"now":)" +
                              std::to_string(now) + more + "}");
  }
  Ids found(const std::string &query, const std::string &more = "") {
    return column(field(retrieve(query, more), "memories"), "memory_id");
  }
  std::string use_count(const std::string &id) { return field(db.memory_get(id), "use_count"); }
};

} // namespace

// Rule: sensitivity filter, on a query without words (the browse path).
TEST_CASE("memory rules: a query without words leaves out sensitive memories unless allowed") {
  MemoryDb m;
  m.put("open", "the build cache lives in s3");
  m.put("secret", "the build server root key", R"(,"sensitive":true)");
  CHECK(m.found("") == Ids{"open"});
  CHECK(sorted(m.found("", R"(,"allow_sensitive":true)")) == Ids{"open", "secret"});
}

// Rule: readers filter, on a query without words (the browse path).
TEST_CASE(
    "memory mutation: a query without words shows a readers-only memory to its readers only") {
  MemoryDb m;
  m.put("open", "the build cache lives in s3");
  m.put("coder", "the build token is in vault", R"(,"readers":["coder"])");
  CHECK(m.found("") == Ids{"open"});
  CHECK(m.found("", R"(,"agent":"reviewer")") == Ids{"open"});
  CHECK(sorted(m.found("", R"(,"agent":"coder")")) == Ids{"coder", "open"});
}

// Rule: no expiry in the past; expires_at equal to the event's ts is expired when written.
TEST_CASE("memory rules: an expires_at equal to the event's ts is refused, one ms later taken") {
  MemoryDb m;
  std::string error = message_of([&] {
    m.put("e0", "expires as it is written", R"(,"expires_at":)" + std::to_string(kT0 + 500), 500);
  });
  // The check of the given expiry names it; the check of a carried-over
  // one would refuse it too, with a message about the version before.
  CHECK(error.find("expires_at: " + std::to_string(kT0 + 500) + " is not after the event's ts") !=
        std::string::npos);
  CHECK(code_of([&] { m.db.memory_get("e0"); }) == Code::kNotFound);
  m.put("e1", "expires a ms after it is written", R"(,"expires_at":)" + std::to_string(kT0 + 501),
        500);
  CHECK(field(m.db.memory_get("e1"), "expires_at") == std::to_string(kT0 + 501));
}

// Rule: no expiry in the past; an update whose carried-over expiry equals its ts is refused.
TEST_CASE("memory rules: an update at the very ms its carried-over expiry falls is refused") {
  MemoryDb m;
  m.put("e1", "rotate the staging password", R"(,"expires_at":)" + std::to_string(kT0 + 1000));
  std::string error = message_of([&] { m.update("e1", R"(,"content":"rotate it weekly")", 1000); });
  CHECK(error.find("expires_at: the version would be expired when written") != std::string::npos);
  CHECK(field(m.db.memory_get("e1"), "version") == "1");
  m.update("e1", R"(,"content":"rotate it weekly")", 999); // a ms before: still valid
  CHECK(field(m.db.memory_get("e1"), "version") == "2");
}

// Rule: a write needs a known scope; a global memory has no scope_id.
TEST_CASE("memory rules: a global memory with a scope_id is refused") {
  MemoryDb m;
  std::string before = snapshot(m.db);
  std::string error = message_of([&] {
    m.db.memory_write("s", R"({"memory_id":"g1","scope":"global","scope_id":"g","content":"x",)"
                           R"("source_refs":["evt_src"],"update_policy":"manual"})");
  });
  CHECK(error.find("scope_id") != std::string::npos);
  CHECK(snapshot(m.db) == before);
}

// Rule: scope isolation; a retrieval naming the global scope with an id is refused.
TEST_CASE("memory rules: a retrieval naming the global scope with an id is refused") {
  MemoryDb m;
  CHECK(code_of([&] {
          m.db.memory_retrieve(R"({"query":"x","scopes":[{"scope":"global","id":"g"}]})");
        }) == Code::kInvalidArg);
}

// Rule: usage counting; a memory the budget excluded is not counted.
TEST_CASE("memory rules: a memory the budget left out is not counted as used") {
  MemoryDb m;
  m.put("low", "use pnpm for installs", R"(,"priority":0,"confidence":0.2)");
  m.put("high", "use pnpm for installs", R"(,"priority":100,"confidence":1)");
  std::string all = m.retrieve("pnpm", R"(,"record_usage":false)");
  int64_t tokens = std::stoll(field(items(field(all, "memories"))[0], "tokens"));
  std::string fitted = m.retrieve("pnpm", R"(,"budget":)" + std::to_string(tokens));
  REQUIRE(column(field(fitted, "memories"), "memory_id") == Ids{"high"});
  REQUIRE(column(field(fitted, "excluded"), "memory_id") == Ids{"low"});
  CHECK(m.use_count("high") == "1");
  CHECK(m.use_count("low") == "0");
}

// Rule: usage counting; the memories a compiled bundle holds count as used.
TEST_CASE("memory rules: a compiled bundle counts the memories it holds as used") {
  SessionFixture f;
  std::string ask = f.add(prompt("the cache keys"));
  f.db.memory_write("s", R"({"memory_id":"mem_cache","scope":"project","scope_id":"p1",)"
                         R"("content":"the cache keys include the compiler version",)"
                         R"("source_refs":[")" +
                             ask + R"("],"update_policy":"manual"})");
  f.db.memory_write("s", R"({"memory_id":"mem_other","scope":"project","scope_id":"p2",)"
                         R"("content":"the cache keys include the target",)"
                         R"("source_refs":[")" +
                             ask + R"("],"update_policy":"manual"})");
  Bundle b(
      f.db.compile(R"({"session_id":"s","max_tokens":4000,"memory":{"scopes":[{"scope":"project",)"
                   R"("scope_id":"p1"}],"query":"cache keys","now":4102444800000}})"));
  REQUIRE(b.has("memory:mem_cache"));
  CHECK(field(f.db.memory_get("mem_cache"), "use_count") == "1");
  CHECK(field(f.db.memory_get("mem_cache"), "last_used") == "4102444800000");
  CHECK(field(f.db.memory_get("mem_other"), "use_count") == "0");
}

// Rule: sensitivity filter in a compiled bundle (policy.allow_sensitive).
TEST_CASE("memory rules: a sensitive memory enters a bundle only when the policy allows it") {
  SessionFixture f;
  std::string ask = f.add(prompt("the deploy key"));
  f.db.memory_write("s", R"({"memory_id":"mem_key","scope":"project","scope_id":"p1",)"
                         R"("content":"the deploy key is in the vault","sensitive":true,)"
                         R"("source_refs":[")" +
                             ask + R"("],"update_policy":"manual"})");
  auto compile = [&](const std::string &policy) {
    return Bundle(f.db.compile(
        R"({"session_id":"s","max_tokens":4000,"memory":{"scopes":[{"scope":"project",)"
        R"("scope_id":"p1"}],"query":"deploy key","now":4102444800000})" +
        policy + "}"));
  };
  CHECK_FALSE(compile("").has("memory:mem_key"));
  CHECK_FALSE(compile(R"(,"policy":{"allow_sensitive":false})").has("memory:mem_key"));
  CHECK(compile(R"(,"policy":{"allow_sensitive":true})").has("memory:mem_key"));
}

// Rule: blend ranking; equal scores tie to the smaller id (README, Memories).
TEST_CASE("memory rules: memories of equal score tie to the smaller id") {
  MemoryDb m;
  for (const char *id : {"b_same", "c_same", "a_same"})
    m.put(id, "prefer squash merges", R"(,"priority":40,"confidence":0.5)");
  std::vector<std::string> mems = items(field(m.retrieve("squash"), "memories"));
  REQUIRE(mems.size() == 3);
  CHECK(field(mems[0], "score") == field(mems[2], "score"));
  CHECK(column(field(m.retrieve("squash"), "memories"), "memory_id") ==
        Ids{"a_same", "b_same", "c_same"});
  CHECK(m.found("") == Ids{"a_same", "b_same", "c_same"}); // browsing too
}

// Rule: usage counting; last_used is the latest use, a retrieval at an earlier now leaves it.
TEST_CASE("memory rules: last_used never moves back") {
  MemoryDb m;
  m.put("m1", "prefer rebase over merge");
  m.retrieve("rebase", "", kT0 + 2 * kDay);
  m.retrieve("rebase", "", kT0 + kDay);
  std::string got = m.db.memory_get("m1");
  CHECK(field(got, "use_count") == "2");
  CHECK(field(got, "last_used") == std::to_string(kT0 + 2 * kDay));
}

// Rule: an update supersedes; the new version's sensitivity, readers and expiry filter retrieval.
TEST_CASE("memory rules: an update's sensitivity, readers and expiry govern retrieval") {
  MemoryDb m;
  m.put("sens", "the rollout plan one");
  m.put("read", "the rollout plan two");
  m.put("exp", "the rollout plan three");
  m.put("open", "the rollout plan four");
  m.update("sens", R"(,"sensitive":true)", 1000);
  m.update("read", R"(,"readers":["coder"])", 1000);
  m.update("exp", R"(,"expires_at":)" + std::to_string(kT0 + 2000), 1000);
  for (const char *query : {"rollout", ""}) {
    CAPTURE(query);
    CHECK(m.found(query) == Ids{"open"});
    CHECK(sorted(m.found(query, R"(,"agent":"coder")")) == Ids{"open", "read"});
    CHECK(sorted(m.found(query, R"(,"allow_sensitive":true)")) == Ids{"open", "sens"});
  }
  // Before the expiry it passed: the updated expiry is what filters.
  CHECK(sorted(column(field(m.retrieve("rollout", "", kT0 + 1500), "memories"), "memory_id")) ==
        Ids{"exp", "open"});
  // And the other way: an update that lifts a restriction lifts it.
  m.update("sens", R"(,"sensitive":false)", 2000);
  m.update("read", R"(,"readers":["coder","reviewer"])", 2000);
  CHECK(sorted(m.found("rollout", R"(,"agent":"reviewer")")) == Ids{"open", "read", "sens"});
}

// Rule: forget; a purged memory's id is not written again.
TEST_CASE("memory rules: a purged memory's id cannot be used by a new memory") {
  MemoryDb m;
  m.put("m1", "a secret to purge");
  std::string purge = field(m.db.memory_forget("m1", R"({"mode":"purge"})"), "event_id");
  std::string error = message_of([&] { m.put("m1", "a new memory"); });
  CHECK(error.find("was used by a memory forgotten by event '" + purge + "'") != std::string::npos);
  CHECK(code_of([&] { m.put("m1", "a new memory"); }) == Code::kConflict);
  CHECK(code_of([&] { m.db.memory_get("m1"); }) == Code::kNotFound);
}

// Rule: blend ranking on browse; the blend, not priority alone, picks among the candidates.
TEST_CASE("memory rules: browsing ranks by the blend among the candidates, not by priority") {
  MemoryDb m;
  m.put("pri", "a note without a match", R"(,"priority":60,"confidence":0)");
  m.put("conf", "another note, also none", R"(,"priority":50,"confidence":1)");
  // conf: 0.15*0.5 + 0.15*1 beats pri: 0.15*0.6 + 0 (same age).
  CHECK(m.found("", R"(,"limit":1)") == Ids{"conf"});
  CHECK(m.found("") == Ids{"conf", "pri"});
}

// Rule: blend ranking on browse; the candidates are the 200 of highest priority.
TEST_CASE("memory rules: browsing more than 200 memories takes the highest priorities") {
  MemoryDb m;
  std::string nd;
  for (int i = 0; i < 210; ++i)
    nd += R"({"type":"MemoryWritten","actor":"a","ts":)" + std::to_string(kT0) +
          R"(,"payload":{"memory_id":"low)" + std::to_string(1000 + i) +
          R"(","scope":"project","scope_id":"p1","content":"filler )" + std::to_string(i) +
          R"(","source_refs":["evt_src"],"update_policy":"manual","priority":0}})" + "\n";
  m.db.append_batch("s", nd);
  m.put("top", "the one that matters", R"(,"priority":100)");
  CHECK(m.found("", R"(,"limit":1)") == Ids{"top"});
  CHECK(m.found("").front() == "top");
}

// Rule: forget; a tombstone clears the keywords of every version too (they are content).
TEST_CASE("memory rules: a tombstone clears every version's keywords with its content") {
  MemoryDb m;
  m.put("m1", "the vpn password is hunter2", R"(,"keywords":["hunter2","vpnsecret"])");
  m.update("m1", R"(,"content":"the vpn password is hunter3","keywords":["hunter3"])", 1000);
  m.db.memory_forget("m1", R"({"ts":)" + std::to_string(kT0 + 2000) + "}");
  std::vector<std::string> all = items(m.db.memory_list(R"({"all_versions":true})"));
  REQUIRE(all.size() == 2);
  for (const std::string &v : all) {
    CHECK(field(v, "content") == "null");
    CHECK(field(v, "keywords") == "[]");
  }
  CHECK(field(m.db.memory_get("m1"), "keywords") == "[]");
  CHECK(m.found("vpnsecret") == Ids{});
  CHECK(m.found("hunter3") == Ids{});
  CHECK(export_all(m.db).find("vpnsecret") != std::string::npos); // the events remain
}

} // namespace memory_rules_test
