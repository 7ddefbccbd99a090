// Memories on their way into a bundle: promotion of a compaction plan's
// candidates (ctxdb_memory_promote) and the compiler's P2 memory segments.
// Each case was a defect a review found (session 26).
#include "agent_events.hpp"
#include "bundle_checks.hpp"
#include "engine.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cmath>
#include <string>
#include <vector>

namespace memory_bundle_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

std::string request(const std::string &session, int64_t max_tokens, const std::string &extra = "") {
  return R"({"session_id":")" + session + R"(","max_tokens":)" + std::to_string(max_tokens) +
         (extra.empty() ? "" : "," + extra) + "}";
}

// A project memory of p1 citing `ref`, with no expiry (update policy).
void put(Engine &db, const std::string &session, const std::string &id, const std::string &content,
         const std::string &ref,
         const std::string &scope = R"("scope":"project","scope_id":"p1")") {
  db.memory_write(session, R"({"memory_id":")" + id + R"(",)" + scope +
                               R"(,"kind":"fact","content":")" + content + R"(","source_refs":[")" +
                               ref + R"("],"update_policy":"manual"})");
}

constexpr int64_t kNow = 4102444800000; // 2100-01-01: every memory is valid then

} // namespace

// A compaction plan's memory candidates can be promoted once the host adds
// what the plan cannot know (scope, scope id, an update policy). A
// StateUpdated add_constraint was proposed as kind "constraint", which no
// memory has (memory_write.schema.json): it could never be promoted. It is
// proposed as an instruction.
TEST_CASE("memory bundle: a compaction plan's constraint candidate can be promoted") {
  SessionFixture f;
  f.add(prompt("set up the release"));
  f.add(event("StateUpdated", "agent",
              R"({"ops":[{"op":"add_constraint","text":"never push to main directly"}]})"));
  f.add(event("AssistantMessageCreated", "assistant",
              R"({"content":[{"type":"text","text":"noted, working on a branch"}]})"));
  f.add(prompt("now tag it"));
  f.add(event("AssistantMessageCreated", "assistant",
              R"({"content":[{"type":"text","text":"tagged v1"}]})"));
  std::string plan = f.db.compact_plan("s", R"({"keep_recent_tokens":10})");
  REQUIRE(field(plan, "status") == "ready");
  std::vector<std::string> candidates = items(field(plan, "memory_candidates"));
  REQUIRE(candidates.size() == 1);
  REQUIRE(field(candidates[0], "kind") == "instruction");
  // The candidate as the plan gives it, with the scope and policy added.
  std::string c = candidates[0];
  c.insert(c.size() - 1, R"(,"scope":"project","scope_id":"p1","update_policy":"manual")");
  INFO(c);
  std::vector<std::string> written = items(f.db.memory_promote("s", "[" + c + "]"));
  REQUIRE(written.size() == 1);
  CHECK(field(written[0], "kind") == "instruction");
  CHECK(field(written[0], "content") == "never push to main directly");
}

// Promoting to a session that does not exist is kNotFound, whatever the
// candidates (an empty list returned "[]": a mistyped session id was a
// success).
TEST_CASE("memory bundle: promote to an unknown session is kNotFound even with no candidates") {
  SessionFixture f;
  std::string ask = f.add(prompt("remember this"));
  std::string one = R"([{"scope":"session","content":"a","source_refs":[")" + ask + R"("]}])";
  CHECK(code_of([&] { f.db.memory_promote("no-such-session", one); }) == Code::kNotFound);
  CHECK(code_of([&] { f.db.memory_promote("no-such-session", "[]"); }) == Code::kNotFound);
  CHECK(f.db.memory_promote("s", "[]") == "[]");
}

// The memory segments of a bundle take at most policy.shares.memories of
// the available tokens (compile_request.schema.json). The share was handed
// to retrieval as a budget for the memories' content only, and each
// segment adds its "Memory (kind, scope id): " header and framing: the
// memories overran their share. Retrieval now fits the segments.
TEST_CASE("memory bundle: memory segments stay within policy.shares.memories") {
  SessionFixture f;
  std::string ask = f.add(prompt("alpha"));
  for (int i = 0; i < 6; ++i)
    put(f.db, "s", "mem_" + std::to_string(i),
        "alpha note " + std::to_string(i) + " about the build cache and its keys", ask);
  const int64_t max_tokens = 1000; // available: no reserved output
  const double share = 0.1;
  Bundle b(f.db.compile(
      request("s", max_tokens,
              R"("memory":{"scopes":[{"scope":"project","scope_id":"p1"}],"query":"alpha","now":)" +
                  std::to_string(kNow) + R"(},"policy":{"shares":{"memories":0.1}})")));
  int64_t memory_tokens = 0, memories = 0;
  for (auto s : b.segments())
    if (s["kind"].get_string().value() == "memory") {
      memory_tokens += s["tokens"].get_int64().value();
      ++memories;
    }
  INFO(b.json);
  REQUIRE(memories > 0);
  CHECK(memory_tokens <= int64_t(std::floor(share * double(max_tokens))));
}

// A session memory is read in its own session only (README, Memories: "a
// memory of any scope but session is readable from every session"). A
// compile of s2 naming s's session scope put s's memory into s2's bundle;
// it is refused now, and a session scope without an id is the session
// compiled (it found nothing before).
TEST_CASE("memory bundle: a session memory never enters another session's bundle") {
  SessionFixture f;
  std::string ask = f.add(prompt("the deploy key rotation"));
  put(f.db, "s", "mem_s_only", "the deploy key rotates every Monday", ask, R"("scope":"session")");
  REQUIRE(field(f.db.memory_get("mem_s_only"), "scope_id") == "s");
  f.db.session_create(R"({"id":"s2","payload":{"agent_id":"a"}})");
  f.db.append("s2", prompt("the deploy key rotation"));
  std::string req = request(
      "s2", 4000,
      R"("memory":{"scopes":[{"scope":"session","scope_id":"s"}],"query":"deploy key","now":)" +
          std::to_string(kNow) + "}");
  CHECK(code_of([&] { f.db.compile(req); }) == Code::kInvalidArg);
  CHECK(message_of([&] { f.db.compile(req); }).find("memory.scopes[0]") != std::string::npos);
  CHECK(field(f.db.memory_get("mem_s_only"), "use_count") == "0");
  auto own = [&](const std::string &session, const std::string &scope) {
    return Bundle(f.db.compile(request(session, 4000,
                                       R"("memory":{"scopes":[)" + scope +
                                           R"(],"query":"deploy key","now":)" +
                                           std::to_string(kNow) + "}")))
        .has("memory:mem_s_only");
  };
  CHECK(own("s", R"({"scope":"session"})"));
  CHECK(own("s", R"({"scope":"session","scope_id":"s"})"));
  CHECK_FALSE(own("s2", R"({"scope":"session"})"));
  // The other scopes as memory_retrieve takes them.
  for (const char *bad : {R"({"scope":"global","scope_id":"g"})", R"({"scope":"project"})"}) {
    CAPTURE(bad);
    CHECK(code_of([&] { own("s", bad); }) == Code::kInvalidArg);
  }
}

// A memory segment's sources name each source ref with its type. The
// type was guessed from the prefix "art_", which a host's event id may
// have too (event.schema.json): such an event was listed as an artifact.
TEST_CASE("memory bundle: a memory segment names an event source as an event, whatever its id") {
  SessionFixture f;
  f.add(R"({"id":"art_notes_1","type":"UserPromptSubmitted","actor":"user",)"
        R"("payload":{"text":"the cache keys include the compiler version"}})");
  put(f.db, "s", "mem_cache", "the cache keys include the compiler version", "art_notes_1");
  Bundle b(f.db.compile(request(
      "s", 4000,
      R"("memory":{"scopes":[{"scope":"project","scope_id":"p1"}],"query":"cache keys","now":)" +
          std::to_string(kNow) + "}")));
  REQUIRE(b.has("memory:mem_cache"));
  for (auto s : b.segments())
    if (s["id"].get_string().value() == "memory:mem_cache") {
      REQUIRE(s["sources"].get_array().size() == 2);
      CHECK(s["sources"].at(1)["id"].get_string().value() == "art_notes_1");
      CHECK(s["sources"].at(1)["type"].get_string().value() == "event");
    }
}

} // namespace memory_bundle_test
