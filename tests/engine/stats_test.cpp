// The stats projection through the engine: what each event type adds, one
// session against the totals, and that a failed append adds nothing.
#include "engine.hpp"
#include "test_util.hpp"
#include "token/counter.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <map>
#include <string>

namespace stats_test {

using namespace ctxdb;

namespace {

int64_t num(const std::string &doc, const char *pointer) {
  simdjson::dom::parser p;
  return p.parse(doc).at_pointer(pointer).get_int64().value();
}

std::string text(const std::string &doc, const char *pointer) {
  simdjson::dom::parser p;
  simdjson::dom::element e = p.parse(doc).at_pointer(pointer);
  return e.is_null() ? "null" : simdjson::minify(e);
}

const char *kEvents =
    R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"please fix the build"},"id":"evt_first"}
{"type":"AssistantMessageCreated","actor":"model","payload":{"content":[{"type":"thinking","text":"hmm, let me see"},{"type":"text","text":"Running make."},{"type":"tool_call","id":"c1","name":"sh"},{"type":"tool_call","id":"c2","name":"sh"}],"usage":{"input_tokens":120,"output_tokens":30,"cache_read_tokens":100,"cache_write_tokens":7},"latency_ms":800}}
{"type":"ApprovalRequested","actor":"agent","payload":{"tool_call_id":"c1"}}
{"type":"ApprovalGranted","actor":"user","payload":{"tool_call_id":"c1"}}
{"type":"ApprovalRequested","actor":"agent","payload":{"tool_call_id":"c2"}}
{"type":"ApprovalDenied","actor":"user","payload":{"tool_call_id":"c2"}}
{"type":"ToolCallFinished","actor":"tool","payload":{"tool_call_id":"c1","output":"error: missing ;","is_error":true,"duration_ms":40}}
{"type":"ToolCallFailed","actor":"tool","payload":{"tool_call_id":"c2","error":"denied","duration_ms":2}}
{"type":"AssistantMessageCreated","actor":"model","payload":{"content":[{"type":"text","text":"Fixed."}],"usage":{"input_tokens":200,"output_tokens":5},"latency_ms":200}}
{"type":"CompactionCompleted","actor":"agent","payload":{"summary":"s","first_kept_event_id":"evt_first","tokens_before":1000,"tokens_after":250}}
{"type":"CompactionFailed","actor":"agent","payload":{"reason":"lost a pending call"}}
{"type":"ContextBuilt","actor":"engine","payload":{"bundle_hash":"h","used_tokens":900}}
{"type":"ErrorRaised","actor":"agent","payload":{"message":"x"}}
{"type":"Note","actor":"agent","payload":{"latency_ms":99999}})";

// kEvents for one session: the compaction keeps from its first event,
// whose id must be unique in the file.
std::string events_of(const std::string &session) {
  std::string out = kEvents;
  for (size_t at; (at = out.find("evt_first\"")) != std::string::npos;)
    out.replace(at, 9, "evt_first_" + session);
  return out;
}

} // namespace

TEST_CASE("stats: counts, tokens, approvals, compactions and latencies of a session") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  db.append_batch("s", events_of("s"));
  std::string s = db.stats("s");
  INFO(s);
  CHECK(text(s, "/session_id") == R"("s")");
  CHECK(num(s, "/events") == 15);
  CHECK(num(s, "/messages/user") == 1);
  CHECK(num(s, "/messages/assistant") == 2);
  // Message tokens are those the messages view counted, summed by role.
  simdjson::dom::parser p;
  std::map<std::string, int64_t> by_role;
  std::string counter;
  std::string messages = db.messages("s", std::nullopt);
  for (simdjson::dom::element m : p.parse(messages).get_array()) {
    by_role[std::string(m["role"].get_string().value())] += m["tokens"].get_int64().value();
    counter = std::string(m["token_counter"].get_string().value());
  }
  CHECK(counter == token::default_counter().name());
  CHECK(text(s, "/tokens/counted/counter") == "\"" + counter + "\"");
  CHECK(by_role["user"] > 0);
  CHECK(by_role["tool"] > 0);
  CHECK(num(s, "/tokens/counted/user") == by_role["user"]);
  CHECK(num(s, "/tokens/counted/assistant") == by_role["assistant"]);
  CHECK(num(s, "/tokens/counted/tool") == by_role["tool"]);
  CHECK(num(s, "/tokens/counted/summary") == by_role["summary"]);
  CHECK(num(s, "/tokens/counted/total") ==
        by_role["user"] + by_role["assistant"] + by_role["tool"] + by_role["summary"]);
  CHECK(num(s, "/tokens/usage/input") == 320);
  CHECK(num(s, "/tokens/usage/output") == 35);
  CHECK(num(s, "/tokens/usage/cache_read") == 100);
  CHECK(num(s, "/tokens/usage/cache_write") == 7);
  CHECK(num(s, "/tools/calls") == 2);
  CHECK(num(s, "/tools/results") == 1);
  CHECK(num(s, "/tools/errors") == 1);
  CHECK(num(s, "/tools/failures") == 1);
  CHECK(num(s, "/tools/duration_ms/count") == 2);
  CHECK(num(s, "/tools/duration_ms/total") == 42);
  CHECK(num(s, "/tools/duration_ms/max") == 40);
  CHECK(db.stats("s").find(R"("mean":21})") != std::string::npos);
  // Only core events' latency_ms counts: the Note's is not ours to read.
  CHECK(num(s, "/latency_ms/count") == 2);
  CHECK(num(s, "/latency_ms/max") == 800);
  CHECK(num(s, "/approvals/requested") == 2);
  CHECK(num(s, "/approvals/granted") == 1);
  CHECK(num(s, "/approvals/denied") == 1);
  CHECK(num(s, "/compactions/completed") == 1);
  CHECK(num(s, "/compactions/failed") == 1);
  CHECK(db.stats("s").find(R"("ratio":0.25})") != std::string::npos);
  CHECK(num(s, "/context/builds") == 1);
  CHECK(num(s, "/context/used_tokens") == 900);
  CHECK(num(s, "/errors") == 1);
}

TEST_CASE("stats: cancelled calls and context tokens, searchable and rebuilt alike") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  db.append_batch(
      "s",
      R"({"type":"ContextAdded","actor":"system","payload":{"kind":"instructions","text":"Use pnpm."}}
{"type":"UserPromptSubmitted","actor":"user","payload":{"text":"build it"}}
{"type":"ContextAdded","actor":"system","payload":{"kind":"context","text":"cwd /w","source":"environment_context"}}
{"type":"AssistantMessageCreated","actor":"model","payload":{"content":[{"type":"tool_call","id":"c1","name":"sh"},{"type":"tool_call","id":"c2","name":"sh"}]}}
{"type":"ToolCallCancelled","actor":"host","payload":{"tool_call_id":"c1","reason":"the user pressed escape"}}
{"type":"ToolCallCancelled","actor":"host","payload":{"tool_call_id":"c2"}})");
  std::string s = db.stats("s");
  INFO(s);
  CHECK(num(s, "/tools/calls") == 2);
  CHECK(num(s, "/tools/cancelled") == 2);
  CHECK(num(s, "/tools/results") == 0);
  const token::Counter &c = token::default_counter();
  CHECK(num(s, "/tokens/counted/context") == c.count("Use pnpm.") + c.count("cwd /w"));
  CHECK(num(s, "/tokens/counted/total") ==
        num(s, "/tokens/counted/user") + num(s, "/tokens/counted/assistant") +
            num(s, "/tokens/counted/tool") + num(s, "/tokens/counted/context"));
  CHECK(num(db.stats(std::nullopt), "/tools/cancelled") == 2);
  // A cancellation's reason is found like another tool result.
  std::string hits = db.search("escape", "");
  CHECK(hits.find(R"("type":"ToolCallCancelled")") != std::string::npos);
  CHECK(hits.find(R"("role":"tool")") != std::string::npos);
  CHECK(text(db.rebuild(R"({"check":true})"), "/identical") == "true");
  CHECK(db.stats("s") == s);
}

TEST_CASE("stats: totals over sessions, and failed appends add nothing") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  db.session_create(R"({"id":"t","payload":{"agent_id":"a"}})");
  CHECK(text(db.stats("t"), "/compactions/ratio") == "null");
  db.append_batch("s", events_of("s"));
  db.append_batch("t", events_of("t"));
  std::string one = db.stats("s");
  std::string bad =
      R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"more"}})"
      "\n"
      R"({"type":"StateUpdated","actor":"a","payload":{"ops":[{"op":"set_step","step":0}]}})";
  CHECK(test::code_of([&] { db.append_batch("s", bad); }) == Code::kInvalidArg);
  CHECK(db.stats("s") == one);
  std::string all = db.stats(std::nullopt);
  CHECK(text(all, "/session_id") == "null");
  CHECK(num(all, "/sessions") == 2);
  CHECK(num(all, "/events") == 2 * num(one, "/events"));
  CHECK(num(all, "/tokens/counted/total") == 2 * num(one, "/tokens/counted/total"));
  CHECK(num(all, "/tools/duration_ms/max") == 40); // maxima are not summed
  CHECK(db.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
}

TEST_CASE("stats: a number written as 250.0 counts at append as a rebuild reads it (250)") {
  // The log stores 250.0 as 250: projections must read the stored form at
  // append too, or a rebuild gives other rows.
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  db.append("s", R"({"type":"AssistantMessageCreated","actor":"model","payload":)"
                 R"({"content":[{"type":"text","text":"hi"}],"latency_ms":250.0}})");
  CHECK(num(db.stats("s"), "/latency_ms/count") == 1);
  CHECK(num(db.stats("s"), "/latency_ms/total") == 250);
  CHECK(db.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
}

TEST_CASE("stats: counters saturate instead of wrapping, and totals never overflow") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  std::string big = R"({"type":"AssistantMessageCreated","actor":"model","payload":)"
                    R"({"content":[],"usage":{"input_tokens":9223372036854775807}}})";
  for (const char *id : {"s", "t"}) {
    db.session_create(std::string(R"({"id":")") + id + R"(","payload":{"agent_id":"a"}})");
    db.append_batch(id, big + "\n" + big);
  }
  CHECK(num(db.stats("s"), "/tokens/usage/input") == INT64_MAX);
  CHECK(num(db.stats(std::nullopt), "/tokens/usage/input") == INT64_MAX);
  CHECK(db.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);
}

TEST_CASE("stats: an integer past 64 signed bits is refused by name, not failed deep inside") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  db.append("s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"x"},)"
                 R"("id":"evt_k"})");
  std::string error = test::message_of([&] {
    db.append("s", R"({"type":"CompactionCompleted","actor":"agent","payload":{"summary":"s",)"
                   R"("first_kept_event_id":"evt_k","tokens_before":18446744073709551615,)"
                   R"("tokens_after":1}})");
  });
  CHECK(error.find("payload.tokens_before' must be an integer, not an integer past 64 signed "
                   "bits") != std::string::npos);
  CHECK(num(db.stats("s"), "/compactions/completed") == 0);
}

} // namespace stats_test
