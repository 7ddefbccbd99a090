// The messages projection: typed blocks, roles and token counts of the
// message-bearing events on a branch's path.
#include "agent_events.hpp"
#include "engine.hpp"
#include "test_util.hpp"
#include "token/counter.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace messages_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

using Fixture = SessionFixture;

int64_t count(std::string_view text) { return token::default_counter().count(text); }

} // namespace

TEST_CASE("messages: one per message-bearing event, with role, blocks and tokens") {
  Fixture f;
  std::string asked = f.add(prompt("fix the failing test"));
  f.add(event("AssistantMessageCreated", "assistant",
              R"({"content":[{"type":"thinking","text":"look first","signature":"sig"},)"
              R"({"type":"text","text":"Reading it."},)"
              R"({"type":"tool_call","id":"c1","name":"read","args":{"path":"a.py"}}]})"));
  f.add(event("ToolCallStarted", "tool", R"({"tool_call_id":"c1"})")); // not a message
  f.add(event("ToolCallFinished", "tool",
              R"({"tool_call_id":"c1","name":"read","output":"x = 1\n","artifact_id":"art_9"})"));
  f.add(event("FileRead", "host", R"({"path":"a.py"})")); // not a message
  f.add(prompt("another way", after(asked)));             // a fork; main is unchanged
  f.add(event("CompactionCompleted", "host",
              R"({"summary":"the user wants a.py fixed","first_kept_event_id":")" + asked + "\"}"));

  std::vector<std::string> m = items(f.messages());
  REQUIRE(m.size() == 4);
  CHECK(column(f.messages(), "role") ==
        std::vector<std::string>{"user", "assistant", "tool", "summary"});
  CHECK(column(f.messages(), "seq") == std::vector<std::string>{"2", "3", "5", "8"});
  CHECK(field(m[0], "event_id") == asked);
  CHECK(field(m[0], "blocks") == R"([{"type":"text","text":"fix the failing test"}])");
  CHECK(field(m[0], "tokens") == std::to_string(count("fix the failing test")));
  CHECK(field(m[0], "token_counter") == token::default_counter().name());
  // The assistant's blocks as given, the thinking block's signature too.
  CHECK(field(m[1], "blocks") ==
        R"([{"type":"thinking","text":"look first","signature":"sig"},)"
        R"({"type":"text","text":"Reading it."},)"
        R"({"type":"tool_call","id":"c1","name":"read","args":{"path":"a.py"}}])");
  CHECK(field(m[1], "tokens") == std::to_string(count("look first") + count("Reading it.") +
                                                count("read") + count(R"({"path":"a.py"})")));
  CHECK(field(m[2], "blocks") == R"([{"type":"tool_result","tool_call_id":"c1","name":"read",)"
                                 R"("status":"success","text":"x = 1\n","artifact_id":"art_9"}])");
  CHECK(field(m[2], "tokens") == std::to_string(count("x = 1\n")));
  CHECK(field(m[3], "blocks") == R"([{"type":"summary","text":"the user wants a.py fixed",)"
                                 R"("first_kept_event_id":")" +
                                     asked + "\"}]");
}

TEST_CASE("messages: a branch reads its own path, root to leaf") {
  Fixture f;
  std::string p = f.add(prompt("one"));
  f.add(prompt("two on main"));
  std::string fork = f.add(prompt("two on the fork", after(p)));
  f.add(prompt("three on the fork", on(fork)));
  f.add(prompt("three on main"));
  auto texts = [&](const char *branch) {
    std::vector<std::string> out;
    for (const std::string &m : items(f.messages(branch)))
      out.push_back(field(field(m, "blocks").substr(1, field(m, "blocks").size() - 2), "text"));
    return out;
  };
  CHECK(texts(nullptr) == std::vector<std::string>{"one", "two on main", "three on main"});
  CHECK(texts(fork.c_str()) ==
        std::vector<std::string>{"one", "two on the fork", "three on the fork"});
  // Each message names the branch it is on: the fork's path starts on main.
  CHECK(column(f.messages(fork.c_str()), "branch_id")[0] == column(f.messages(), "branch_id")[0]);
  CHECK(column(f.messages(fork.c_str()), "branch_id")[1] == fork);
  CHECK(code_of([&] { f.messages("evt_unknown"); }) == Code::kNotFound);
}

TEST_CASE("messages: a structured summary stays an object") {
  Fixture f;
  std::string p = f.add(prompt("go"));
  f.add(event("CompactionCompleted", "host",
              R"({"summary":{"goal":"ship","done":["a"]},"first_kept_event_id":")" + p + "\"}"));
  std::string block = items(field(items(f.messages())[1], "blocks"))[0];
  CHECK(field(block, "summary") == R"({"goal":"ship","done":["a"]})");
  CHECK(field(items(f.messages())[1], "tokens") ==
        std::to_string(count(R"({"goal":"ship","done":["a"]})")));
}

} // namespace messages_test
