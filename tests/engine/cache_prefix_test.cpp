// Consecutive compiles of a growing session share their prefix: in every
// provider format the request is byte-identical up to where the previous
// compile's latest-turn context began (the cache breakpoint), and the
// bundle's stable_prefix_tokens is the previous bundle's instructions,
// tools and whole conversation.
#include "agent_events.hpp"
#include "bundle_checks.hpp"
#include "engine.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

#include <string>

namespace cache_prefix_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

// One turn more: the previous turn's answer (after the first), a prompt,
// context, a call and its result; the state changes every turn.
void add_turn(SessionFixture &f, int n) {
  std::string k = std::to_string(n);
  if (n > 0)
    f.add(event("AssistantMessageCreated", "assistant",
                R"({"content":[{"type":"text","text":"module )" + k + R"( is next"}]})"));
  f.add(prompt("turn " + k + ": fix module " + k));
  f.add(event("ContextAdded", "system",
              R"({"kind":"context","text":"cwd /src/m)" + k +
                  R"(","source":"environment_context"})"));
  f.add(call("c" + k));
  f.add(finished("c" + k));
  f.add(event("StateUpdated", "agent",
              R"({"ops":[{"op":"open_question","text":"after turn )" + k + "?\"}]}"));
}

int64_t tokens_before_latest_context(Bundle &b) {
  int64_t n = 0;
  bool conversation = false;
  for (auto s : b.segments()) {
    std::string_view role = s["role"].get_string().value();
    conversation = conversation || role == "user" || role == "assistant" || role == "tool";
    if (role == "context" && conversation) break;
    n += s["tokens"].get_int64().value();
  }
  return n;
}

} // namespace

TEST_CASE("consecutive turns share the request prefix up to the cache breakpoint, per format") {
  for (const auto &[format, opener] : kLatestContextOpener) {
    CAPTURE(format);
    SessionFixture f;
    f.add(event("ContextAdded", "system",
                R"({"kind":"instructions","text":"Run the linter.","source":"agents_md"})"));
    const std::string request =
        R"({"session_id":"s","max_tokens":100000,"record":true,)"
        R"("instructions":[{"kind":"system","text":"You are a coding agent."}],)"
        R"("tools":[{"name":"bash","parameters":{"type":"object"}}]})";
    std::string previous;
    int64_t previous_stable = 0;
    for (int n = 0; n < 5; ++n) {
      CAPTURE(n);
      add_turn(f, n);
      Bundle b(f.db.compile(request));
      check_bundle(b);
      int64_t stable = b.doc["stable_prefix_tokens"].get_int64().value();
      if (n == 0)
        CHECK(stable == 0);
      else
        CHECK(stable == previous_stable); // what the previous bundle had before its context
      previous_stable = tokens_before_latest_context(b);
      std::string out = without_breakpoints(f.db.bundle_convert(b.json, format));
      if (!previous.empty()) {
        size_t end = previous.find(opener);
        REQUIRE(end != std::string::npos);
        CHECK(end > previous.find("ok c" + std::to_string(n - 1))); // the last result included
        INFO("previous: " << previous << "\nnow: " << out);
        CHECK(out.compare(0, end, previous, 0, end) == 0);
      }
      previous = out;
    }
  }
}

TEST_CASE("anthropic.messages: the breakpoint is on the block where the stable prefix ends") {
  SessionFixture f;
  const std::string request =
      R"({"session_id":"s","max_tokens":100000,"record":true,"format":"anthropic.messages",)"
      R"("instructions":[{"kind":"system","text":"You are a coding agent."}]})";
  add_turn(f, 0);
  f.db.compile(request);
  add_turn(f, 1);
  std::string out = f.db.compile(request);
  // A breakpoint right after the previous turn's last result: the cache
  // read the provider bills covers everything before it.
  const std::string mark = R"("cache_control":{"type":"ephemeral"})";
  size_t result = out.find("ok c0");
  REQUIRE(result != std::string::npos);
  CHECK(out.find(mark, result) < out.find("module 1 is next"));
}

} // namespace cache_prefix_test
