// ContextAdded: context that is not the user speaking, as the log accepts
// it, the messages view shows it and search finds it.
#include "agent_events.hpp"
#include "bundle_checks.hpp"
#include "engine.hpp"
#include "test_util.hpp"
#include "token/counter.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace context_added_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

std::string context(const std::string &kind, const std::string &text,
                    const std::string &source = "") {
  std::string payload = R"({"kind":")" + kind + R"(","text":")" + text + "\"";
  if (!source.empty()) payload += R"(,"source":")" + source + "\"";
  return event("ContextAdded", "system", payload + "}");
}

// Appending `line` fails as invalid, naming `words`, and stores nothing.
void refuses(SessionFixture &f, const std::string &line, const std::string &words) {
  std::string before = f.messages();
  try {
    f.db.append("s", line);
    FAIL("accepted: " << line);
  } catch (const Error &e) {
    CHECK(e.code() == Code::kInvalidArg);
    CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
  }
  CHECK(f.messages() == before);
}

} // namespace

TEST_CASE("ContextAdded: a core event, checked against its schema") {
  SessionFixture f;
  refuses(f, event("ContextAdded", "system", R"({"text":"x"})"), "kind");
  refuses(f, event("ContextAdded", "system", R"({"kind":"context"})"), "text");
  refuses(f, event("ContextAdded", "system", R"({"kind":"prompt","text":"x"})"), "kind");
  refuses(f, event("ContextAdded", "system", R"({"kind":"context","text":"x","source":7})"),
          "source");
  f.add(context("instructions", "Be terse.", "agents_md"));
  f.add(context("context", "<environment_context>cwd /w</environment_context>"));
  CHECK(items(f.messages()).size() == 2);
}

TEST_CASE("ContextAdded: a message of role context, counted and searchable") {
  SessionFixture f;
  f.add(context("instructions", "Run the linter before committing.", "agents_md"));
  f.add(prompt("fix the build"));
  f.add(context("context", "cwd is /work/zebra", "environment_context"));
  std::vector<std::string> m = items(f.messages());
  REQUIRE(m.size() == 3);
  CHECK(column(f.messages(), "role") == std::vector<std::string>{"context", "user", "context"});
  CHECK(field(m[0], "blocks") == R"([{"type":"context","kind":"instructions","source":"agents_md",)"
                                 R"("text":"Run the linter before committing."}])");
  CHECK(field(m[2], "blocks") == R"([{"type":"context","kind":"context",)"
                                 R"("source":"environment_context","text":"cwd is /work/zebra"}])");
  CHECK(field(m[2], "tokens") ==
        std::to_string(token::default_counter().count("cwd is /work/zebra")));
  std::vector<std::string> hits = items(field(f.db.search("zebra", ""), "hits"));
  REQUIRE(hits.size() == 1);
  CHECK(field(hits[0], "type") == "ContextAdded");
  CHECK(field(hits[0], "role") == "context");
  CHECK(items(field(f.db.search("linter", R"({"role":"context"})"), "hits")).size() == 1);
  // Never the goal: the state's goal is the user's prompt.
  std::string state = field(f.db.state("s", std::nullopt, std::nullopt), "state");
  CHECK(field(state, "goal").find("fix the build") != std::string::npos);
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("ContextAdded: its images are stored as artifacts and sent, as a prompt's are") {
  SessionFixture f;
  // A 1x1 PNG.
  const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
                          "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
  f.add(prompt("what is on the screen?"));
  f.add(event("ContextAdded", "system",
              R"({"kind":"context","text":"the screen","source":"meta","content":[)"
              R"({"type":"image","data":")" +
                  png + R"(","mime_type":"image/png"}]})"));
  std::vector<std::string> blocks = items(field(items(f.messages())[1], "blocks"));
  REQUIRE(blocks.size() == 2);
  CHECK(field(blocks[1], "type") == "image");
  CHECK(field(blocks[1], "artifact_id").rfind("art_", 0) == 0);
  // Compiled at its place (the branch's end, but an image cannot join the
  // latest turn's text block), its image in the provider's native shape.
  std::string out =
      f.db.compile(R"({"session_id":"s","max_tokens":100000,"format":"anthropic.messages"})");
  CHECK(out.find(R"({"type":"text","text":"<context source=\"meta\">\nthe screen\n</context>"},)"
                 R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":")" +
                 png) != std::string::npos);
}

namespace {

std::string compile(Engine &db, const std::string &extra = "", int64_t max_tokens = 100000) {
  return db.compile(R"({"session_id":"s","max_tokens":)" + std::to_string(max_tokens) +
                    (extra.empty() ? "" : "," + extra) + "}");
}

std::string format_of(const char *format) { return std::string(R"("format":")") + format + "\""; }

// The segment of a bundle with this id, as compact JSON ("" when absent).
std::string segment(Bundle &b, const std::string &id) {
  for (auto s : b.segments())
    if (s["id"].get_string().value() == id) return simdjson::minify(s);
  return "";
}

constexpr const char *kFormats[] = {
    "canonical", "openai.chat", "openai.responses", "anthropic.messages", "gemini.generate_content",
    "ai.sdk"};

} // namespace

TEST_CASE("instructions from the log: never dropped, deduplicated, before the conversation") {
  SessionFixture f;
  std::string base = f.add(context("instructions", "You are Codex.", "base_instructions"));
  std::string agents = f.add(context("instructions", "Use pnpm.", "agents_md"));
  std::string ask = f.add(prompt("fix the build"));
  f.add(call("c1"));
  std::string log;
  for (int i = 0; i < 100; ++i) log += "warning " + std::to_string(i) + " in the build\\n";
  std::string result =
      f.add(event("ToolCallFinished", "tool", R"({"tool_call_id":"c1","output":")" + log + "\"}"));
  std::string again = f.add(context("instructions", "Use pnpm.", "agents_md")); // restated
  f.add(prompt("and the tests"));
  Bundle b(compile(f.db, R"("instructions":[{"kind":"system","text":"Be brief."}])"));
  check_bundle(b);
  std::vector<std::string> ids = b.ids();
  REQUIRE(ids.size() >= 4);
  CHECK(std::vector<std::string>(ids.begin(), ids.begin() + 4) ==
        std::vector<std::string>{"instructions:system-0", "instructions:" + base,
                                 "instructions:" + agents, "msg:" + ask});
  std::string pnpm = segment(b, "instructions:" + agents);
  CHECK(field(pnpm, "priority") == "0");
  CHECK(field(pnpm, "role") == "developer");
  CHECK(field(pnpm, "kind") == "instructions");
  CHECK(column(field(pnpm, "sources"), "id") == std::vector<std::string>{agents, again});
  CHECK(field(pnpm, "reason").find("agents_md") != std::string::npos);
  CHECK(b.json.find("instructions:" + again) == std::string::npos);
  // Said by the host too: once.
  Bundle host(compile(f.db, R"("instructions":[{"kind":"developer","text":"Use pnpm."}])"));
  CHECK(host.json.find("instructions:" + agents) == std::string::npos);
  // A budget too small for the conversation still has every instruction.
  Bundle tight(compile(f.db, "", 60));
  CHECK(tight.has("instructions:" + base));
  CHECK(tight.has("instructions:" + agents));
  CHECK_FALSE(tight.has("msg:" + result));
  // In the provider's standing context, never a user turn.
  std::string chat = compile(f.db, format_of("openai.chat"));
  CHECK(chat.find(R"({"role":"developer","content":"You are Codex."})") != std::string::npos);
  std::string anthropic = compile(f.db, format_of("anthropic.messages"));
  CHECK(anthropic.find(R"("system":[{"type":"text","text":"You are Codex."})") !=
        std::string::npos);
  std::string gemini = compile(f.db, format_of("gemini.generate_content"));
  CHECK(gemini.find(R"("systemInstruction":{"parts":[{"text":"You are Codex."})") !=
        std::string::npos);
}

TEST_CASE("instructions marked sensitive stay out unless allowed, and say so") {
  SessionFixture f;
  std::string secret = f.add(
      event("ContextAdded", "system",
            R"({"kind":"instructions","text":"The deploy key is k-991.","source":"developer"})",
            R"("visibility":"sensitive")"));
  f.add(prompt("deploy it"));
  Bundle hidden(compile(f.db));
  CHECK(hidden.json.find("k-991") == std::string::npos);
  CHECK(hidden.reason_of_excluded("instructions:" + secret).find("sensitive") != std::string::npos);
  Bundle shown(compile(f.db, R"("policy":{"allow_sensitive":true})"));
  CHECK(shown.has("instructions:" + secret));
}

namespace {

// A session whose first turn holds context before and between the
// conversation's messages: what Claude Code and Codex transcripts hold.
struct ContextSession : SessionFixture {
  std::string env, ask, meta, c1, r1, next;
  ContextSession() {
    env = add(context("context", "cwd /work/app", "environment_context"));
    ask = add(prompt("fix the build"));
    meta = add(context("context", "Caveat: local commands follow", "meta"));
    c1 = add(call("c1"));
    r1 = add(finished("c1"));
    next = add(prompt("now the tests"));
  }
};

constexpr const char *kEnv = "<context source=\"environment_context\">\ncwd /work/app\n</context>";
constexpr const char *kMeta =
    "<context source=\"meta\">\nCaveat: local commands follow\n</context>";

// Where `text` is in `out`, JSON-escaped as every format writes it.
size_t at(const std::string &out, std::string text) {
  std::string escaped;
  for (char c : text)
    escaped += c == '\n' ? std::string("\\n") : c == '"' ? std::string("\\\"") : std::string(1, c);
  return out.find(escaped);
}

} // namespace

TEST_CASE("context at its place, marked, in every format; never the goal nor the request") {
  ContextSession f;
  Bundle b(compile(f.db));
  check_bundle(b);
  CHECK(b.ids() == std::vector<std::string>{"msg:" + f.env, "msg:" + f.ask, "msg:" + f.meta,
                                            "msg:" + f.c1, "msg:" + f.r1, "msg:" + f.next});
  std::string meta = segment(b, "msg:" + f.meta);
  CHECK(field(meta, "kind") == "context");
  CHECK(field(meta, "role") == "user");
  CHECK(field(meta, "content") ==
        std::string(R"([{"type":"text","text":")") +
            R"(<context source=\"meta\">\nCaveat: local commands follow\n</context>"}])");
  CHECK(field(segment(b, "msg:" + f.next), "kind") == "request");
  CHECK(field(segment(b, "msg:" + f.env), "kind") == "context");
  // The goal is the user's first prompt, not the context before it.
  std::string state = field(f.db.state("s", std::nullopt, std::nullopt), "state");
  CHECK(field(field(field(state, "goal"), "user_goal"), "text") == "fix the build");
  for (const char *format : kFormats) {
    std::string out = compile(f.db, format_of(format));
    INFO(format << ": " << out);
    size_t env = at(out, kEnv), ask = at(out, "fix the build"), meta = at(out, kMeta),
           call = out.find("\"c1\""), next = at(out, "now the tests");
    REQUIRE(env != std::string::npos);
    REQUIRE(meta != std::string::npos);
    CHECK(env < ask);
    CHECK(ask < meta);
    CHECK(meta < call);
    CHECK(call < next);
    CHECK(out.find(R"("role":"context")") == std::string::npos);
  }
  // Anthropic and Gemini alternate: the context joins the prompt's user turn.
  std::string anthropic = compile(f.db, format_of("anthropic.messages"));
  CHECK(
      anthropic.find(
          R"({"role":"user","content":[{"type":"text","text":"<context source=\"environment_context\">)") !=
      std::string::npos);
  CHECK(
      anthropic.find(
          R"(</context>"},{"type":"text","text":"fix the build"},{"type":"text","text":"<context source=\"meta\">)") !=
      std::string::npos);
  std::string gemini = compile(f.db, format_of("gemini.generate_content"));
  CHECK(gemini.find(R"("contents":[{"role":"user","parts":[{"text":"<context)") !=
        std::string::npos);
}

TEST_CASE("context between a call and its result stays out of the call's pair") {
  SessionFixture f;
  f.add(prompt("run it"));
  f.add(call("c1"));
  std::string reminder = f.add(context("context", "the tool is slow", "system_reminder"));
  f.add(finished("c1"));
  for (const char *format : kFormats) {
    std::string out = compile(f.db, format_of(format));
    INFO(format << ": " << out);
    CHECK(at(out, "the tool is slow") != std::string::npos);
  }
  // OpenAI: the tool message right after the call, the context after it.
  std::string chat = compile(f.db, format_of("openai.chat"));
  size_t tool = chat.find(R"("role":"tool")"), ctx = at(chat, "the tool is slow");
  CHECK(tool < ctx);
  CHECK(chat.find(R"("tool_calls")") < tool);
}

TEST_CASE("context at the very end joins the latest turn's context") {
  SessionFixture f;
  std::string ask = f.add(prompt("explain the bug"));
  std::string answer = f.add(event("AssistantMessageCreated", "assistant",
                                   R"({"content":[{"type":"text","text":"It is a race."}]})"));
  std::string out = f.add(context("context", "exit 0", "command_output"));
  // Context is not a request: the branch still ends on a finished answer.
  CHECK_THROWS_WITH_AS(compile(f.db), doctest::Contains("finished answer"), Error);
  Bundle b(compile(f.db, R"("request":"fix it")"));
  check_bundle(b);
  CHECK(b.ids() ==
        std::vector<std::string>{"msg:" + ask, "msg:" + answer, "request", "msg:" + out});
  std::string last = segment(b, "msg:" + out);
  CHECK(field(last, "role") == "context");
  CHECK(field(last, "kind") == "context");
  for (const char *format : {"openai.chat", "openai.responses", "anthropic.messages",
                             "gemini.generate_content", "ai.sdk"}) {
    std::string o = compile(f.db, R"("request":"fix it",)" + format_of(format));
    INFO(format << ": " << o);
    size_t request = o.find("fix it"),
           block = o.find("<context>\\n<context source=\\\"command_output\\\">");
    REQUIRE(block != std::string::npos);
    CHECK(request < block);
    CHECK(o.find("</context>\\n</context>") != std::string::npos);
  }
}

TEST_CASE("context leaves with its turn, and compaction summarizes it as history") {
  SessionFixture f;
  f.add(context("instructions", "Never push to main.", "agents_md"));
  std::vector<std::string> prompts, contexts;
  for (int i = 0; i < 6; ++i) {
    std::string k = std::to_string(i);
    prompts.push_back(f.add(prompt("turn " + k + ": fix module " + k)));
    contexts.push_back(f.add(context("context", "reminder " + k, "system_reminder")));
    f.add(call("c" + k));
    f.add(finished("c" + k));
  }
  // A tight budget keeps the newest turns whole: an older turn's context
  // leaves with it.
  Bundle tight(compile(f.db, "", 220));
  check_bundle(tight);
  CHECK(tight.has("msg:" + contexts.back()));
  CHECK_FALSE(tight.has("msg:" + contexts.front()));
  for (size_t i = 0; i < contexts.size(); ++i)
    if (tight.has("msg:" + contexts[i])) CHECK(tight.has("msg:" + prompts[i]));
  // The plan's transcript shows it as context, never as a prompt.
  std::string plan = f.db.compact_plan("s", R"({"keep_recent_tokens":10})");
  std::string transcript = field(plan, "transcript");
  CHECK(transcript.find(contexts.front() + " context]") != std::string::npos);
  CHECK(transcript.find("<context source=\"system_reminder\">\nreminder 0") != std::string::npos);
  std::string done = f.db.compact("s", R"({"keep_recent_tokens":10})", nullptr);
  REQUIRE(field(done, "status") == "compacted");
  CHECK(field(field(field(done, "summary"), "goal"), "user_goal") == "turn 0: fix module 0");
  Bundle after(compile(f.db));
  check_bundle(after);
  CHECK(after.has("summary"));
  CHECK_FALSE(after.has("msg:" + contexts.front()));
  // Standing instructions outlive the cut.
  CHECK(after.json.find("Never push to main.") != std::string::npos);
}

} // namespace context_added_test
