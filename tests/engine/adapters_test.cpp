// The provider adapters: a canonical bundle in, each provider's request
// shape out. Fixtures in tests/fixtures/providers/: input bundles, golden
// outputs, and JSON Schemas of the providers' request shapes written from
// their documentation. CTXDB_UPDATE_GOLDEN=1 rewrites the golden files
// (review the diff before committing it).
#include "compile/adapters.hpp"
#include "error.hpp"
#include "test_util.hpp"
#include "json/json_schema.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace adapters_test {

using namespace ctxdb;
using compile::convert_bundle;

namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" / "providers";

std::string read_fixture(const std::string &name) {
  std::ifstream in(kFixtures / name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const char *const kProviderFormats[] = {"openai.chat", "openai.responses", "anthropic.messages"};

std::string schema_name(std::string_view format) {
  std::string s(format);
  for (char &c : s)
    if (c == '.') c = '_';
  return s + ".request.schema.json";
}

// (a) the output has the provider's documented shape.
void check_schema(const std::string &out, std::string_view format) {
  std::string name = schema_name(format);
  json::Schema schema = json::Schema::parse(read_fixture(name), name);
  simdjson::dom::parser p;
  INFO(format << ": " << out);
  CHECK_NOTHROW(schema.validate(json::parse(p, out, "output"), "request"));
}

std::string str(simdjson::dom::element e, const char *key) {
  return std::string(e[key].get_string().value());
}

// By value, so that a range-for does not iterate a destroyed temporary.
simdjson::dom::array array_at(simdjson::dom::element e, const char *key) {
  return e[key].get_array().value();
}

// (b) the rules the schemas cannot express. OpenAI Chat: a tool message
// answers a call of the assistant message just before it (only tool messages
// between); every call is answered before the next non-tool message;
// content is null only beside tool_calls.
void check_openai_chat(const std::string &out) {
  INFO(out);
  simdjson::dom::parser p;
  std::set<std::string> open;
  for (simdjson::dom::element m : array_at(p.parse(out), "messages")) {
    std::string role = str(m, "role");
    if (role == "tool") {
      CHECK_MESSAGE(open.erase(str(m, "tool_call_id")) == 1,
                    "tool message without its call just before: " << str(m, "tool_call_id"));
      CHECK(m["content"].is_string());
      continue;
    }
    CHECK_MESSAGE(open.empty(), "calls left unanswered before a " << role << " message");
    open.clear();
    simdjson::dom::array calls;
    if (role == "assistant" && !m["tool_calls"].get(calls)) {
      // arguments are not checked as JSON: a string the model wrote goes
      // back as it was, valid or not, as OpenAI documents it may be.
      for (simdjson::dom::element c : calls) CHECK(open.insert(str(c, "id")).second);
    } else {
      CHECK(m["content"].is_string());
    }
  }
}

// Responses: every function_call_output answers an earlier function_call;
// assistant messages hold output_text, the others input_text.
void check_openai_responses(const std::string &out) {
  INFO(out);
  simdjson::dom::parser p;
  std::set<std::string> calls, answered;
  for (simdjson::dom::element item : array_at(p.parse(out), "input")) {
    std::string type = str(item, "type");
    if (type == "function_call") {
      CHECK(calls.insert(str(item, "call_id")).second);
    } else if (type == "function_call_output") {
      CHECK_MESSAGE(calls.count(str(item, "call_id")) == 1,
                    "output without an earlier call: " << str(item, "call_id"));
      CHECK(answered.insert(str(item, "call_id")).second);
    } else {
      REQUIRE(type == "message");
      std::string want = str(item, "role") == "assistant" ? "output_text" : "input_text";
      for (simdjson::dom::element part : array_at(item, "content"))
        CHECK(str(part, "type") == want);
    }
  }
}

// Anthropic: the first message is the user's and roles alternate strictly;
// in a user message the tool_result blocks come first, each answering a
// tool_use of the assistant message just before, and every tool_use there
// is answered; at most 4 cache_control in all. Returns how many there are.
int check_anthropic(const std::string &out) {
  INFO(out);
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(out);
  int cache = 0;
  auto count = [&](simdjson::dom::element e) { cache += e["cache_control"].error() ? 0 : 1; };
  simdjson::dom::array list;
  if (!doc["system"].get(list))
    for (simdjson::dom::element b : list) count(b);
  if (!doc["tools"].get(list))
    for (simdjson::dom::element t : list) count(t);
  std::string prev;
  std::set<std::string> uses;
  bool first = true;
  for (simdjson::dom::element m : array_at(doc, "messages")) {
    std::string role = str(m, "role");
    if (first) CHECK(role == "user");
    CHECK(role != prev);
    std::set<std::string> answered;
    bool past_results = false;
    for (simdjson::dom::element b : array_at(m, "content")) {
      count(b);
      std::string type = str(b, "type");
      if (type == "tool_result") {
        CHECK(role == "user");
        CHECK_MESSAGE(!past_results, "a tool_result after other blocks");
        CHECK_MESSAGE(uses.count(str(b, "tool_use_id")) == 1,
                      "tool_result not answering the message before: " << str(b, "tool_use_id"));
        answered.insert(str(b, "tool_use_id"));
      } else {
        past_results = true;
      }
    }
    if (role == "user") CHECK_MESSAGE(answered == uses, "tool_use left unanswered");
    uses.clear();
    if (role == "assistant")
      for (simdjson::dom::element b : array_at(m, "content"))
        if (str(b, "type") == "tool_use") uses.insert(str(b, "id"));
    prev = role;
    first = false;
  }
  CHECK(cache <= 4);
  return cache;
}

void check_provider(const std::string &out, std::string_view format) {
  check_schema(out, format);
  if (format == "openai.chat") check_openai_chat(out);
  if (format == "openai.responses") check_openai_responses(out);
  if (format == "anthropic.messages") check_anthropic(out);
}

// A bundle around `segments` (a JSON list's inside), valid for the schema.
std::string bundle_with(const std::string &segments, int stable_prefix_tokens = 0) {
  return R"({"format":"canonical","session_id":"s","branch_id":"b","leaf_event_id":null,)"
         R"("token_counter":"approx-v2","budget":{"max_tokens":1000,"reserved_output_tokens":0,)"
         R"("available":1000,"used":0,"free":1000},"tokens_by_kind":{},"stable_prefix_tokens":)" +
         std::to_string(stable_prefix_tokens) + R"(,"segments":[)" + segments +
         R"(],"excluded":[],"redactions":[],"hash":"sha256:0"})";
}

std::string segment(const char *role, const std::string &content, const char *kind = "message",
                    int tokens = 10) {
  return R"({"id":"x","kind":")" + std::string(kind) + R"(","priority":1,"role":")" + role +
         R"(","content":[)" + content + R"(],"tokens":)" + std::to_string(tokens) +
         R"(,"reason":"r","sources":[{"type":"event","id":"e"}],"hash":"sha256:0"})";
}

std::string text(const char *t) { return R"({"type":"text","text":")" + std::string(t) + "\"}"; }

const std::string kToolsSegment =
    segment("system", R"({"type":"tool_specs","tools":[{"name":"sh"}]})", "tools", 30);

std::string error_message(const std::string &bundle, const char *format) {
  try {
    convert_bundle(bundle, format);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("every fixture bundle converts to each provider's documented shape") {
  for (const char *fixture : {"coding_session.bundle.json", "resumed_session.bundle.json"}) {
    std::string bundle = read_fixture(fixture);
    for (const char *format : kProviderFormats) {
      CAPTURE(fixture);
      CAPTURE(format);
      std::string out = convert_bundle(bundle, format);
      check_provider(out, format);
      CHECK(convert_bundle(bundle, format) == out);
    }
  }
}

TEST_CASE("the coding session matches the golden output of each format byte for byte") {
  std::string bundle = read_fixture("coding_session.bundle.json");
  bool update = std::getenv("CTXDB_UPDATE_GOLDEN") != nullptr;
  for (const char *format : kProviderFormats) {
    std::string name = std::string("coding_session.") + format + ".json";
    std::string out = convert_bundle(bundle, format) + "\n";
    if (update) std::ofstream(kFixtures / name, std::ios::binary) << out;
    CHECK_MESSAGE(out == read_fixture(name), name);
  }
}

TEST_CASE("openai.chat: instructions and turns as messages, tools apart, no thinking") {
  std::string out = convert_bundle(read_fixture("coding_session.bundle.json"), "openai.chat");
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(out);
  simdjson::dom::array messages = doc["messages"].get_array().value();
  CHECK(messages.size() == 12); // 13 segments, the tools segment is not a message
  CHECK(str(messages.at(0).value(), "role") == "system");
  CHECK(str(messages.at(1).value(), "role") == "developer");
  CHECK(str(messages.at(7).value(), "content") ==
        "Here is the traceback from staging. The refund of 12.34 fails every time.\n\n"
        "[image: artifact art_5f1c0e9b2d7a4c31]");
  simdjson::dom::element assistant = messages.at(8).value();
  CHECK(str(assistant, "content") == "I'll read the handler and run the failing refund tests.");
  simdjson::dom::element call = assistant["tool_calls"].at(0).value()["function"];
  CHECK(str(call, "arguments") == R"({"path":"payments/refunds/handler.py","start_line":30,)"
                                  R"("end_line":60})");
  CHECK(out.find("quantize failing on a float") == std::string::npos); // thinking
  CHECK(str(messages.at(10).value(), "content").rfind("exit status 2\n\nFAILED", 0) == 0);
  CHECK(str(messages.at(9).value(), "content").find("full output in artifact") !=
        std::string::npos);
  CHECK(doc["tools"].get_array().value().size() == 3);
}

TEST_CASE("openai.responses: strict is off and parameters present on every tool") {
  std::string out = convert_bundle(read_fixture("resumed_session.bundle.json"), "openai.responses");
  simdjson::dom::parser p;
  simdjson::dom::element grep = p.parse(out)["tools"].at(0).value();
  CHECK(simdjson::minify(grep) ==
        R"({"type":"function","name":"grep","parameters":{"type":"object","properties":{}},)"
        R"("strict":false})");
}

TEST_CASE("anthropic.messages: breakpoints on tools, system, the stable prefix and the tail") {
  std::string out =
      convert_bundle(read_fixture("coding_session.bundle.json"), "anthropic.messages");
  CHECK(check_anthropic(out) == 4);
  simdjson::dom::parser p;
  simdjson::dom::element doc = p.parse(out);
  CHECK(doc["system"].get_array().value().size() == 2);
  simdjson::dom::array messages = doc["messages"].get_array().value();
  REQUIRE(messages.size() == 3); // state and the user turn; the assistant; results and request
  // The stable prefix (383 tokens) ends at the summary, the first user block.
  simdjson::dom::element summary = messages.at(0).value()["content"].at(0).value();
  CHECK(str(summary, "text").rfind("Summary of earlier work", 0) == 0);
  CHECK_FALSE(summary["cache_control"].error());
  simdjson::dom::array last = messages.at(2).value()["content"].get_array().value();
  CHECK(str(last.at(1).value(), "type") == "tool_result");
  CHECK(last.at(1).value()["is_error"].get_bool().value());
  CHECK_FALSE(last.at(2).value()["cache_control"].error());
}

TEST_CASE("anthropic.messages: a conversation resumed by the assistant opens with a user turn") {
  std::string out =
      convert_bundle(read_fixture("resumed_session.bundle.json"), "anthropic.messages");
  // The whole bundle is the stable prefix: its breakpoint is the tail's.
  CHECK(check_anthropic(out) == 3);
  simdjson::dom::parser p;
  simdjson::dom::array messages = array_at(p.parse(out), "messages");
  CHECK(simdjson::minify(messages.at(0).value()) ==
        R"j({"role":"user","content":[{"type":"text","text":"(conversation continues)"}]})j");
  simdjson::dom::array calls = messages.at(1).value()["content"].get_array().value();
  // String args that are not a JSON object are wrapped.
  CHECK(simdjson::minify(calls.at(1).value()["input"]) == R"({"input":"TokenVerifier"})");
  CHECK(simdjson::minify(calls.at(2).value()["input"]) ==
        R"({"input":"[\"build\",\"//svc/auth:all\"]"})");
  simdjson::dom::element pruned = messages.at(2).value()["content"].at(0).value();
  CHECK(str(pruned, "content") == "[output in artifact art_0c3d9a11f2e84b07]");
}

TEST_CASE("anthropic.messages: merging, result order and skipped segments") {
  std::string bundle = bundle_with(
      segment("user", text("a")) + "," + segment("user", text("b")) + "," +
      segment("assistant", R"({"type":"thinking","text":"t"})") + "," +
      segment("assistant", R"({"type":"tool_call","id":"c1","name":"sh","args":{"cmd":"ls"}})") +
      "," + segment("user", text("while it runs")) + "," +
      segment("tool",
              R"({"type":"tool_result","tool_call_id":"c1","status":"success","text":"x"})"));
  std::string out = convert_bundle(bundle, "anthropic.messages");
  check_provider(out, "anthropic.messages");
  CHECK(
      out ==
      R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"sh","input":{"cmd":"ls"}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"x"},)"
      R"({"type":"text","text":"while it runs","cache_control":{"type":"ephemeral"}}]}]})");
}

TEST_CASE("anthropic.messages: the stable-prefix breakpoint is never doubled nor invented") {
  std::string segments = segment("system", text("sys"), "instructions") + "," + kToolsSegment +
                         "," + segment("user", text("u1")) + "," +
                         segment("assistant", text("a1")) + "," + segment("user", text("u2"));
  auto breakpoints = [&](int stable) {
    std::string out = convert_bundle(bundle_with(segments, stable), "anthropic.messages");
    check_schema(out, "anthropic.messages");
    return check_anthropic(out);
  };
  CHECK(breakpoints(0) == 3);   // no stable prefix
  CHECK(breakpoints(5) == 3);   // the first segment alone is longer
  CHECK(breakpoints(40) == 3);  // ends at the tools segment: the last tool has one
  CHECK(breakpoints(50) == 4);  // ends at u1
  CHECK(breakpoints(70) == 3);  // ends at u2, the tail
  CHECK(breakpoints(500) == 3); // everything
}

TEST_CASE("openai formats: an assistant turn keeps its order and a call answers in place") {
  std::string bundle = bundle_with(
      segment("assistant",
              text("look") +
                  R"(,{"type":"tool_call","id":"c1","name":"sh","args":"{\"cmd\":\"ls\"}"},)" +
                  text("then")) +
      "," + segment("tool", R"({"type":"tool_result","tool_call_id":"c1","status":"error"})"));
  std::string responses = convert_bundle(bundle, "openai.responses");
  check_provider(responses, "openai.responses");
  CHECK(
      responses ==
      R"({"input":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"look","annotations":[]}]},)"
      R"({"type":"function_call","call_id":"c1","name":"sh","arguments":"{\"cmd\":\"ls\"}"},)"
      R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"then","annotations":[]}]},)"
      R"({"type":"function_call_output","call_id":"c1","output":""}]})");
  std::string chat = convert_bundle(bundle, "openai.chat");
  check_provider(chat, "openai.chat");
  CHECK(chat.find(R"("content":"look\n\nthen","tool_calls")") != std::string::npos);
}

TEST_CASE("an empty bundle converts to an empty conversation") {
  std::string bundle = bundle_with("");
  CHECK(convert_bundle(bundle, "openai.chat") == R"({"messages":[]})");
  CHECK(convert_bundle(bundle, "openai.responses") == R"({"input":[]})");
  CHECK(convert_bundle(bundle, "anthropic.messages") == R"({"messages":[]})");
  for (const char *format : kProviderFormats)
    check_provider(convert_bundle(bundle, format), format);
  CHECK(convert_bundle(bundle, "canonical") == bundle);
}

TEST_CASE("canonical gives the bundle back byte for byte") {
  std::string bundle = read_fixture("coding_session.bundle.json");
  CHECK(convert_bundle(bundle, "canonical") == bundle);
}

TEST_CASE("bad bundles and formats are refused with a code and the field") {
  using test::code_of;
  std::string good = bundle_with(segment("user", text("hi")));
  CHECK(code_of([&] { convert_bundle(good, "openai.chatt"); }) == Code::kInvalidArg);
  std::string msg = error_message(good, "openai.chatt");
  CHECK(msg.find("'openai.chatt'") != std::string::npos);
  CHECK(msg.find("anthropic.messages") != std::string::npos);
  CHECK(code_of([&] { convert_bundle("{\"segments\":[", "openai.chat"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { convert_bundle("", "canonical"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { convert_bundle("[]", "canonical"); }) == Code::kInvalidArg);
  std::string no_hash = good.substr(0, good.rfind(",\"hash\"")) + "}";
  CHECK(code_of([&] { convert_bundle(no_hash, "anthropic.messages"); }) == Code::kInvalidArg);
  CHECK(error_message(no_hash, "anthropic.messages").find("hash") != std::string::npos);
  std::string bad_kind = bundle_with(segment("user", text("hi"), "chatter"));
  CHECK(error_message(bad_kind, "openai.chat").find("segments[0].kind") != std::string::npos);

  // Blocks that break the bundle's rules name the block.
  auto refused = [](const std::string &segments, const char *field) {
    std::string bundle = bundle_with(segments);
    for (const char *format : kProviderFormats) {
      CAPTURE(format);
      CHECK(code_of([&] { convert_bundle(bundle, format); }) == Code::kInvalidArg);
      CHECK(error_message(bundle, format).find(field) != std::string::npos);
    }
  };
  refused(segment("user", R"({"type":"tool_call","id":"c","name":"sh"})"),
          "segments[0].content[0].type");
  refused(segment("assistant", R"({"type":"tool_call","name":"sh"})"), "segments[0].content[0].id");
  refused(
      segment("assistant", text("x") + R"(,{"type":"tool_call","id":"c","name":"sh","args":3})"),
      "segments[0].content[1].args");
  refused(segment("tool", text("loose text")), "segments[0].content[0].type");
  refused(segment("user", R"({"type":"text"})"), "segments[0].content[0].text");
  refused(segment("system", R"({"type":"tool_specs","tools":[{}]})", "tools"),
          "segments[0].content[0].tools[0].name");
}

} // namespace adapters_test
