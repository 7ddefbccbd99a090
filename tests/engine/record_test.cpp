// Recording providers' responses (engine/provider/, Engine::record_response):
// each fixture of tests/fixtures/responses/ recorded gives the golden
// payload of tests/fixtures/responses/expected/<fixture>.json, and the
// rules around it: usage with one meaning, a missing field named, an
// incomplete stream refused, nothing stored on error, a retry returning the
// stored event and other content under the same response id a conflict.
// CTXDB_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
#include "engine.hpp"
#include "error.hpp"
#include "test_util.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace record_test {

using namespace ctxdb;
using test::TempDir;

namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" / "responses";

std::string read_file(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Fixture {
  const char *file;
  const char *format;
  bool stream;
};

const Fixture kFixtureList[] = {
    {"openai_chat_text.json", "openai.chat", false},
    {"openai_chat_parallel_tools.json", "openai.chat", false},
    {"openai_chat_refusal.json", "openai.chat", false},
    {"openai_chat_stream_tools.ndjson", "openai.chat", true},
    {"openai_chat_stream_text.sse", "openai.chat", true},
    {"openai_responses_reasoning_tools.json", "openai.responses", false},
    {"openai_responses_text_refusal.json", "openai.responses", false},
    {"openai_responses_stream.ndjson", "openai.responses", true},
    {"anthropic_thinking_tools.json", "anthropic.messages", false},
    {"anthropic_refusal.json", "anthropic.messages", false},
    {"anthropic_stream_basic_response.sse", "anthropic.messages", true},
    {"anthropic_stream_tool_use_response.sse", "anthropic.messages", true},
    {"anthropic_stream_incomplete_partial_json_response.sse", "anthropic.messages", true},
    {"anthropic_stream_refusal.sse", "anthropic.messages", true},
    {"gemini_thought_calls.json", "gemini.generate_content", false},
    {"gemini_image.json", "gemini.generate_content", false},
    {"gemini_stream.ndjson", "gemini.generate_content", true},
};

std::string options(const char *format, bool stream, const std::string &extra = "") {
  return std::string(R"({"format":")") + format + "\"" + (stream ? R"(,"stream":true)" : "") +
         extra + "}";
}

struct Db {
  TempDir dir;
  Engine db{dir.file("r.ctxdb"), ""};
  Db() { db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})"); }
  std::string record(const Fixture &f, const std::string &extra = "") {
    return db.record_response("s", options(f.format, f.stream, extra),
                              read_file(kFixtures / f.file));
  }
};

// The stored payload of an event (JSON text).
std::string payload_of(const std::string &event) {
  simdjson::dom::parser p;
  return json::canonical(p.parse(event)["payload"].value());
}

std::string field_text(const std::string &doc, const char *pointer) {
  simdjson::dom::parser p;
  simdjson::dom::element e;
  if (p.parse(doc).at_pointer(pointer).get(e)) return "<absent>";
  return json::canonical(e);
}

Code code_of(const std::function<void()> &fn, std::string &message) {
  try {
    fn();
  } catch (const Error &e) {
    message = e.what();
    return e.code();
  }
  return Code::kOk;
}

} // namespace

TEST_CASE("record: every fixture gives its golden payload") {
  bool update = std::getenv("CTXDB_UPDATE_GOLDEN") != nullptr;
  for (const Fixture &f : kFixtureList) {
    Db d;
    std::string payload = payload_of(d.record(f));
    std::filesystem::path golden =
        kFixtures / "expected" / (std::filesystem::path(f.file).stem().string() + ".json");
    if (update) {
      std::ofstream(golden, std::ios::binary) << payload << "\n";
      continue;
    }
    INFO(f.file);
    std::string want = read_file(golden);
    CHECK(payload + "\n" == want);
  }
}

TEST_CASE("record: usage has one meaning whatever the provider") {
  Db d;
  // OpenAI counts cached tokens inside prompt_tokens: 2082 - 1920 uncached.
  std::string chat = d.record(kFixtureList[1]);
  CHECK(field_text(chat, "/payload/usage/input_tokens") == "162");
  CHECK(field_text(chat, "/payload/usage/cache_read_tokens") == "1920");
  CHECK(field_text(chat, "/payload/usage/output_tokens") == "317");
  CHECK(field_text(chat, "/payload/usage/reasoning_tokens") == "256");
  CHECK(field_text(chat, "/payload/usage/provider_usage/prompt_tokens") == "2082");
  // Anthropic's input_tokens already exclude cache reads and writes.
  std::string claude = d.record(kFixtureList[8]);
  CHECK(field_text(claude, "/payload/usage/input_tokens") == "21");
  CHECK(field_text(claude, "/payload/usage/cache_read_tokens") == "2048");
  CHECK(field_text(claude, "/payload/usage/cache_write_tokens") == "188086");
  // Gemini: promptTokenCount includes the cache; thoughts are output too.
  std::string gemini = d.record(kFixtureList[14]);
  CHECK(field_text(gemini, "/payload/usage/input_tokens") == "170");
  CHECK(field_text(gemini, "/payload/usage/cache_read_tokens") == "1024");
  CHECK(field_text(gemini, "/payload/usage/output_tokens") == "226");
  CHECK(field_text(gemini, "/payload/usage/reasoning_tokens") == "190");
  // A stream's usage: Anthropic's message_delta overwrites message_start's.
  std::string streamed = d.record(kFixtureList[11]);
  CHECK(field_text(streamed, "/payload/usage/output_tokens") == "65");
  CHECK(field_text(streamed, "/payload/usage/input_tokens") == "377");
}

TEST_CASE("record: a retry returns the stored event, other content is a conflict") {
  Db d;
  std::string first = d.record(kFixtureList[0]);
  std::string again = d.record(kFixtureList[0]);
  CHECK(first == again);
  CHECK(field_text(first, "/seq") == "2");
  // The same response id with another answer.
  std::string other = read_file(kFixtures / kFixtureList[0].file);
  other.replace(other.find("Hello!"), 6, "Howdy!");
  std::string msg;
  CHECK(code_of([&] { d.db.record_response("s", options("openai.chat", false), other); }, msg) ==
        Code::kConflict);
  CHECK(msg.find("already exists") != std::string::npos);
  // The stream of a response and the response itself are one answer when
  // they say the same; here they do not (the stream has no usage chunk).
  CHECK(field_text(d.db.session_get("s"), "/event_count") == "2");
}

TEST_CASE("record: a missing field is named and nothing is stored") {
  Db d;
  std::string before = d.db.session_get("s");
  struct Case {
    const char *format;
    const char *response;
    const char *names;
  } cases[] = {
      {"openai.chat", R"({"id":"x","choices":[]})", "choices[0]"},
      {"openai.chat", R"({"id":"x","choices":[{"finish_reason":"stop"}]})", "choices[0].message"},
      {"openai.chat", R"({"choices":[{"message":{"content":"hi"}}]})", ": id is missing"},
      {"openai.chat",
       R"({"id":"x","choices":[{"message":{"tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}}]})",
       "choices[0].message.tool_calls[0].function.name"},
      {"openai.responses",
       R"({"id":"r","output":[{"type":"function_call","name":"f","arguments":"{}"}]})",
       "output[0].call_id"},
      {"openai.responses", R"({"id":"r"})", "output is missing"},
      {"anthropic.messages", R"({"id":"m","content":[{"type":"tool_use","id":"t","input":{}}]})",
       "content[0].name"},
      {"anthropic.messages", R"({"id":"m","content":[{"type":"text","text":7}]})",
       "content[0].text must be a string"},
      {"gemini.generate_content", R"({"candidates":[]})", "candidates[0]"},
      {"gemini.generate_content",
       R"({"candidates":[{"content":{"parts":[{"functionCall":{"args":{}}}]}}]})",
       "candidates[0].content.parts[0].functionCall.name"},
      {"openai.chat",
       R"({"id":"x","choices":[{"message":{}}],"usage":{"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":9}}})",
       "cached_tokens"},
  };
  for (const Case &c : cases) {
    std::string msg;
    INFO(c.format << " " << c.response);
    CHECK(code_of([&] { d.db.record_response("s", options(c.format, false), c.response); }, msg) ==
          Code::kInvalidArg);
    CHECK_MESSAGE(msg.find(c.names) != std::string::npos, msg);
  }
  CHECK(d.db.session_get("s") == before);
}

TEST_CASE("record: a stream without its terminal event is refused") {
  Db d;
  std::string before = d.db.session_get("s");
  struct Case {
    const char *file;
    const char *format;
    const char *names;
  } cases[] = {
      {"openai_chat_stream_truncated.ndjson", "openai.chat", "choices[0].finish_reason"},
      {"openai_responses_stream_cut.ndjson", "openai.responses", "response.completed"},
      {"anthropic_stream_cut.sse", "anthropic.messages", "message_stop"},
      {"gemini_stream_cut.ndjson", "gemini.generate_content", "candidates[0].finishReason"},
  };
  for (const Case &c : cases) {
    std::string msg;
    INFO(c.file);
    CHECK(code_of(
              [&] {
                d.db.record_response("s", options(c.format, true), read_file(kFixtures / c.file));
              },
              msg) == Code::kInvalidArg);
    CHECK_MESSAGE(msg.find(c.names) != std::string::npos, msg);
  }
  std::string msg;
  // An event before message_start, and an empty stream.
  CHECK(
      code_of(
          [&] {
            d.db.record_response(
                "s", options("anthropic.messages", true),
                R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})");
          },
          msg) == Code::kInvalidArg);
  CHECK(msg.find("message_start") != std::string::npos);
  CHECK(code_of([&] { d.db.record_response("s", options("openai.chat", true), "\n\n"); }, msg) ==
        Code::kInvalidArg);
  CHECK(d.db.session_get("s") == before);
}

TEST_CASE("record: bad input and options are refused before anything is stored") {
  Db d;
  std::string before = d.db.session_get("s");
  std::string msg;
  auto rec = [&](const std::string &opts, const std::string &resp) {
    return code_of([&] { d.db.record_response("s", opts, resp); }, msg);
  };
  CHECK(rec(options("openai.chat", false), "{not json") == Code::kInvalidJson);
  CHECK(rec(options("openai.chat", false), "\"a\xff\"") == Code::kInvalidUtf8);
  CHECK(rec(options("openai.chat", false), "[1]") == Code::kInvalidArg);
  CHECK(rec(options("openai.chat", true), "{\"id\":\"x\"}\n{bad") == Code::kInvalidJson);
  CHECK(msg.find("line 2") != std::string::npos);
  CHECK(rec(R"({"format":"mistral"})", "{}") == Code::kInvalidArg);
  CHECK(msg.find("format") != std::string::npos);
  CHECK(rec(R"({"stream":true})", "{}") == Code::kInvalidArg);
  CHECK(rec("", "{}") == Code::kInvalidJson);
  CHECK(rec(options("gemini.generate_content", true), "{}") == Code::kInvalidArg);
  CHECK(code_of(
            [&] {
              d.db.record_response("nope", options("openai.chat", false),
                                   read_file(kFixtures / kFixtureList[0].file));
            },
            msg) == Code::kNotFound);
  CHECK(d.db.session_get("s") == before);
}

TEST_CASE("record: options place the event") {
  Db d;
  std::string first = d.record(kFixtureList[0], R"(,"actor":"gpt","ts":1234,"latency_ms":40)");
  CHECK(field_text(first, "/actor") == "\"gpt\"");
  CHECK(field_text(first, "/ts") == "1234");
  CHECK(field_text(first, "/payload/latency_ms") == "40");
  std::string id = field_text(first, "/id");
  CHECK(id.starts_with("\"rsp_"));
  // The id depends on the session: another session records its own event.
  d.db.session_create(R"({"id":"t","payload":{"agent_id":"a"}})");
  std::string other = d.db.record_response("t", options("openai.chat", false),
                                           read_file(kFixtures / kFixtureList[0].file));
  CHECK(field_text(other, "/id") != id);
  // A fork's branch, by parent.
  std::string root = field_text(d.db.session_get("s"), "/started_event_id");
  std::string forked = d.record(kFixtureList[2], ",\"parent_id\":" + root);
  CHECK(field_text(forked, "/parent_id") == root);
}

TEST_CASE("record: stats sum the five kinds of usage and a cost from the session's prices") {
  TempDir dir;
  std::string path = dir.file("p.ctxdb");
  {
    Engine db(path, "");
    db.session_create(R"({"id":"s","payload":{"agent_id":"a","pricing":{)"
                      R"("gpt-4.1-2025-04-14":{"input":2,"cache_read":0.5,"output":8},)"
                      R"("*":{"input":1,"cache_read":0.1,"cache_write":1.25,"output":1}}}})");
    db.record_response("s", options("openai.chat", false),
                       read_file(kFixtures / "openai_chat_text.json"));
  }
  // Reopened, the prices are read from the log again.
  Engine db(path, "");
  db.record_response("s", options("anthropic.messages", false),
                     read_file(kFixtures / "anthropic_thinking_tools.json"));
  std::string stats = db.stats("s");
  CHECK(field_text(stats, "/tokens/usage") ==
        R"({"input":40,"output":403,"cache_read":2048,"cache_write":188086,"reasoning":0})");
  // gpt-4.1: 19 x 2 + 10 x 8 = 118 µUSD; claude, by "*": 21 x 1 + 2048 x 0.1
  // + 188086 x 1.25 + 393 x 1 = 235726.3 µUSD.
  CHECK(field_text(stats, "/cost") ==
        R"({"nano_usd":235844300,"priced_messages":2,"usd":0.235844})");
  CHECK(field_text(db.rebuild(R"({"check":true})"), "/identical") == "true");
  CHECK(db.stats("s") == stats);
  // Reasoning tokens are summed apart, inside output.
  db.record_response("s", options("openai.chat", false),
                     read_file(kFixtures / "openai_chat_parallel_tools.json"));
  CHECK(field_text(db.stats("s"), "/tokens/usage/reasoning") == "256");
  CHECK(field_text(db.stats(std::nullopt), "/cost/priced_messages") == "3");
}

TEST_CASE("record: a response to a recorded compile calibrates its model's token count") {
  TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  auto built = [&](int64_t tokens) {
    db.append("s", R"({"type":"ContextBuilt","actor":"ctxdb","payload":{"bundle_hash":"h",)"
                   R"("used_tokens":)" +
                       std::to_string(tokens) + "}}");
  };
  // The response's parent is the leaf, the ContextBuilt: 2082 reported
  // (162 uncached + 1920 cached) against 2000 counted.
  built(2000);
  db.record_response("s", options("openai.chat", false),
                     read_file(kFixtures / "openai_chat_parallel_tools.json"));
  // Not after a compile: no sample.
  db.record_response("s", options("openai.chat", false),
                     read_file(kFixtures / "openai_chat_refusal.json"));
  // Two of the same model add up: 21 + 2048 + 188086 reported.
  built(150000);
  db.record_response("s", options("anthropic.messages", false),
                     read_file(kFixtures / "anthropic_thinking_tools.json"));
  built(10);
  db.record_response("s", options("anthropic.messages", false),
                     read_file(kFixtures / "anthropic_refusal.json"));
  std::string want =
      R"([{"model":"claude-sonnet-4-5-20250929","samples":2,"estimated_tokens":150010,)"
      R"("reported_tokens":190719,"ratio":1.2714},{"model":"o4-mini-2025-04-16","samples":1,)"
      R"("estimated_tokens":2000,"reported_tokens":2082,"ratio":1.041}])";
  CHECK(field_text(db.stats("s"), "/calibration") == want);
  CHECK(field_text(db.stats(std::nullopt), "/calibration") == want);
  CHECK(field_text(db.rebuild(R"({"check":true})"), "/identical") == "true");
  CHECK(field_text(db.stats("s"), "/calibration") == want);
}

TEST_CASE("record: a model's calibration shrinks the budget of compiles for that model") {
  TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  // A compile counted 1000 tokens; the provider read `input` for it.
  auto answered = [&](const std::string &model, int n, int64_t input) {
    db.append("s", R"({"type":"ContextBuilt","actor":"ctxdb","payload":{"bundle_hash":"h",)"
                   R"("used_tokens":1000}})");
    db.record_response("s", options("anthropic.messages", false),
                       R"({"id":"msg_)" + model + std::to_string(n) +
                           R"(","type":"message","role":"assistant","model":")" + model +
                           R"(","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",)"
                           R"("usage":{"input_tokens":)" +
                           std::to_string(input) + R"(,"output_tokens":2}})");
  };
  for (int n = 0; n < 3; ++n) answered("claude-x", n, 1250);
  for (int n = 0; n < 2; ++n) answered("claude-few", n, 2000);
  for (int n = 0; n < 3; ++n) answered("claude-over", n, 800);
  db.append("s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"next"}})");
  auto compiled = [&](const char *model) {
    std::string req = R"({"session_id":"s","max_tokens":10000,"reserved_output_tokens":1000)";
    if (model) req += std::string(R"(,"model":")") + model + "\"";
    return db.compile(req + "}");
  };
  // 1250 read for every 1000 counted, over 3 responses: 9000 * 1000/1250.
  std::string b = compiled("claude-x");
  CHECK(field_text(b, "/budget/available") == "7200");
  CHECK(field_text(b, "/budget/calibration") ==
        R"({"model":"claude-x","samples":3,"factor":1.25})");
  CHECK(std::stoll(field_text(b, "/budget/free")) ==
        7200 - std::stoll(field_text(b, "/budget/used")));
  // Two samples say too little; a counter that counts more than the
  // provider reads leaves the budget as it is; so does no model.
  for (const char *model : {"claude-few", "claude-over", "claude-unknown"}) {
    CAPTURE(model);
    CHECK(field_text(compiled(model), "/budget/available") == "9000");
  }
  CHECK(field_text(compiled(nullptr), "/budget").find("calibration") == std::string::npos);
  // A model named by an empty string is refused, naming the field.
  std::string bad = R"({"session_id":"s","max_tokens":10,"model":""})";
  CHECK(test::code_of([&] { db.compile(bad); }) == Code::kInvalidArg);
}

// The tool calls (id, name, arguments) of the last assistant turn of a
// compiled request, as "id name args" lines.
std::string compiled_calls(Engine &db, const char *format) {
  std::string req =
      std::string(R"({"session_id":"s","max_tokens":100000,"format":")") + format + "\"}";
  std::string out = db.compile(req);
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(out);
  std::string lines;
  // By value: a range-for over get_array().value() would walk a destroyed
  // temporary.
  simdjson::dom::array messages = doc["messages"].get_array().value();
  for (simdjson::dom::element m : messages) {
    if (std::string_view(m["role"].get_string().value()) != "assistant") continue;
    lines.clear();
    if (simdjson::dom::array calls; !m["tool_calls"].get(calls))
      for (simdjson::dom::element c : calls) {
        simdjson::dom::parser ap;
        lines +=
            std::string(c["id"].get_string().value()) + " " +
            std::string(c["function"]["name"].get_string().value()) + " " +
            json::canonical(
                ap.parse(std::string(c["function"]["arguments"].get_string().value())).value()) +
            "\n";
      }
    if (simdjson::dom::array blocks; !m["content"].get(blocks))
      for (simdjson::dom::element b : blocks)
        if (std::string_view(b["type"].get_string().value()) == "tool_use")
          lines += std::string(b["id"].get_string().value()) + " " +
                   std::string(b["name"].get_string().value()) + " " +
                   json::canonical(b["input"].value()) + "\n";
  }
  return lines;
}

TEST_CASE("record: a recorded answer compiles back into the same assistant turn") {
  struct Case {
    const char *fixture, *record_format, *compile_format, *want;
  } cases[] = {
      {"openai_chat_parallel_tools.json", "openai.chat", "openai.chat",
       "call_abc123 get_current_weather {\"location\":\"Boston, MA\"}\n"
       "call_def456 get_current_weather {\"location\":\"Paris, France\",\"unit\":\"celsius\"}\n"},
      {"anthropic_thinking_tools.json", "anthropic.messages", "anthropic.messages",
       "toolu_01A09q90qw90lq917835lq9 get_weather "
       "{\"location\":\"San Francisco, CA\",\"unit\":\"celsius\"}\n"
       "toolu_01B09q90qw90lq917835lq8 get_weather "
       "{\"location\":\"New York, NY\",\"unit\":\"celsius\"}\n"},
  };
  for (const Case &c : cases) {
    INFO(c.fixture);
    Db d;
    d.db.append("s",
                R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"weather?"}})");
    std::string e = d.db.record_response("s", options(c.record_format, false),
                                         read_file(kFixtures / c.fixture));
    simdjson::dom::parser p;
    simdjson::dom::array blocks = p.parse(e)["payload"]["content"].get_array().value();
    for (simdjson::dom::element b : blocks) {
      if (std::string_view(b["type"].get_string().value()) != "tool_call") continue;
      d.db.append("s", R"({"type":"ToolCallFinished","actor":"tool","payload":{"tool_call_id":")" +
                           std::string(b["id"].get_string().value()) + R"(","output":"sunny"}})");
    }
    CHECK(compiled_calls(d.db, c.compile_format) == c.want);
  }
}

TEST_CASE("record: a bad price table is refused with its session") {
  TempDir dir;
  Engine db(dir.file("p.ctxdb"), "");
  std::string msg;
  CHECK(code_of(
            [&] {
              db.session_create(
                  R"({"id":"s","payload":{"agent_id":"a","pricing":{"m":{"input":-1}}}})");
            },
            msg) == Code::kInvalidArg);
  CHECK(msg.find("payload.pricing.m.input") != std::string::npos);
  CHECK(
      code_of([&] { db.session_create(R"({"id":"s","payload":{"agent_id":"a","pricing":[1]}})"); },
              msg) == Code::kInvalidArg);
  CHECK(db.session_list() == "[]");
}

} // namespace record_test
