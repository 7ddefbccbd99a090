// The provider adapters: a canonical bundle in, each provider's request
// shape out. Fixtures in tests/fixtures/providers/: input bundles, golden
// outputs, and JSON Schemas of the providers' request shapes written from
// their documentation. CTXDB_UPDATE_GOLDEN=1 rewrites the golden files
// (review the diff before committing it).
#include "agent_events.hpp"
#include "bundle_checks.hpp"
#include "compile/adapters.hpp"
#include "engine.hpp"
#include "error.hpp"
#include "provider_checks.hpp"
#include "test_util.hpp"
#include "util/base64.hpp"
#include "json/json_schema.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace adapters_test {

using namespace ctxdb;
using namespace ctxdb::test::provider_checks;
using compile::convert_bundle;
using simdjson::dom::element;
using test::kLatestContextOpener;
using test::without_breakpoints;

namespace {

int anthropic_breakpoints(const std::string &out) {
  simdjson::dom::parser p;
  return check_anthropic(json::parse(p, out, "output"));
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

std::string text(const std::string &t) { return R"({"type":"text","text":")" + t + "\"}"; }

const std::string kToolsSegment =
    segment("system", R"({"type":"tool_specs","tools":[{"name":"sh"}]})", "tools", 30);

std::string call(const char *id, const std::string &more = "") {
  return R"({"type":"tool_call","id":")" + std::string(id) +
         R"(","name":"sh","args":{"cmd":"ls"})" + more + "}";
}

std::string result(const char *id, const char *status = "success", const char *t = "x") {
  return R"({"type":"tool_result","tool_call_id":")" + std::string(id) + R"(","status":")" +
         status + R"(","text":")" + t + "\"}";
}

std::string error_message(const std::string &bundle, const char *format) {
  try {
    convert_bundle(bundle, format);
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

std::string minify(element e) { return simdjson::minify(e); }

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

// Contract placement: context before the conversation is standing (with the
// instructions), context after it is one marked block at the end of the
// latest user turn.
TEST_CASE("placement: standing context with the instructions, latest-turn context last") {
  std::string bundle =
      bundle_with(segment("system", text("sys"), "instructions") + "," + kToolsSegment + "," +
                  segment("context", text("summary"), "summary") + "," +
                  segment("user", text("u1")) + "," + segment("context", text("Plan: p"), "plan") +
                  "," + segment("context", text("Files: f"), "files"));
  const std::string ctx = "<context>\\nPlan: p\\n\\nFiles: f\\n</context>";
  std::map<std::string, std::string> want = {
      {"openai.chat",
       R"({"messages":[{"role":"system","content":"sys"},{"role":"developer","content":"summary"},)"
       R"({"role":"user","content":[{"type":"text","text":"u1"},{"type":"text","text":")" +
           ctx + R"("}]}],"tools":[{"type":"function","function":{"name":"sh"}}]})"},
      {"openai.responses",
       R"({"input":[{"type":"message","role":"system","content":[{"type":"input_text","text":"sys"}]},)"
       R"({"type":"message","role":"developer","content":[{"type":"input_text","text":"summary"}]},)"
       R"({"type":"message","role":"user","content":[{"type":"input_text","text":"u1"},)"
       R"({"type":"input_text","text":")" +
           ctx +
           R"("}]}],"tools":[{"type":"function","name":"sh","parameters":{"type":"object","properties":{}},"strict":false}]})"},
      {"anthropic.messages",
       R"({"system":[{"type":"text","text":"sys"},{"type":"text","text":"summary","cache_control":{"type":"ephemeral"}}],)"
       R"("messages":[{"role":"user","content":[{"type":"text","text":"u1","cache_control":{"type":"ephemeral"}},)"
       R"({"type":"text","text":")" +
           ctx +
           R"("}]}],"tools":[{"name":"sh","input_schema":{"type":"object","properties":{}},"cache_control":{"type":"ephemeral"}}]})"},
      {"gemini.generate_content",
       R"({"systemInstruction":{"parts":[{"text":"sys"},{"text":"summary"}]},)"
       R"("contents":[{"role":"user","parts":[{"text":"u1"},{"text":")" +
           ctx +
           R"("}]}],"tools":[{"functionDeclarations":[{"name":"sh","parametersJsonSchema":{"type":"object","properties":{}}}]}]})"},
      {"ai.sdk",
       R"({"messages":[{"role":"system","content":"sys"},{"role":"system","content":"summary"},)"
       R"({"role":"user","content":[{"type":"text","text":"u1"},{"type":"text","text":")" +
           ctx + R"("}]}],"tools":{"sh":{"inputSchema":{"type":"object","properties":{}}}}})"},
  };
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    std::string out = convert_bundle(bundle, format);
    check_provider(out, format);
    CHECK(out == want[format]);
  }
}

TEST_CASE("placement: after tool outputs the context is a user message of its own (OpenAI, AI "
          "SDK) or the last block of the results' user turn (Anthropic, Gemini)") {
  std::string bundle = bundle_with(
      segment("user", text("go")) + "," + segment("assistant", call("c1")) + "," +
      segment("tool", result("c1")) + "," + segment("context", text("Goal: g"), "goal"));
  const std::string ctx = "<context>\\nGoal: g\\n</context>";
  simdjson::dom::parser p;
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    std::string out = convert_bundle(bundle, format);
    check_provider(out, format);
    CHECK(out.find(ctx) != std::string::npos);
  }
  std::string chat = convert_bundle(bundle, "openai.chat");
  CHECK(chat.find(R"({"role":"tool","tool_call_id":"c1","content":"x"},{"role":"user","content":)"
                  R"([{"type":"text","text":")" +
                  ctx + "\"}]}]") != std::string::npos);
  std::string responses = convert_bundle(bundle, "openai.responses");
  CHECK(responses.find(R"("output":"x"},{"type":"message","role":"user","content":[{"type":)"
                       R"("input_text","text":")" +
                       ctx + "\"}]}]") != std::string::npos);
  std::string anthropic = convert_bundle(bundle, "anthropic.messages");
  CHECK(anthropic.find(R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"c1",)"
                       R"("content":"x","cache_control":{"type":"ephemeral"}},{"type":"text",)"
                       R"("text":")" +
                       ctx + "\"}]}]") != std::string::npos);
  std::string gemini = convert_bundle(bundle, "gemini.generate_content");
  CHECK(gemini.find(R"("response":{"output":"x"}}},{"text":")" + ctx + "\"}]}]") !=
        std::string::npos);
  std::string ai = convert_bundle(bundle, "ai.sdk");
  CHECK(ai.find(R"("output":{"type":"text","value":"x"}}]},{"role":"user","content":[{"type":)"
                R"("text","text":")" +
                ctx + "\"}]}]") != std::string::npos);
}

TEST_CASE("whitespace-only texts never reach a provider") {
  // Claude streams "\n\n" before its text; a user may send only spaces.
  std::string bundle = bundle_with(segment("system", text(" "), "instructions") + "," +
                                   segment("user", text("\\n\\n") + "," + text("hi")) + "," +
                                   segment("assistant", text("\\n\\n") + "," + text(" \\t")) + "," +
                                   segment("assistant", text("\\n\\nanswer") + "," + call("c1")) +
                                   "," + segment("tool", result("c1", "success", "  ")) + "," +
                                   segment("context", text("\\n"), "plan"));
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    std::string out = convert_bundle(bundle, format);
    check_provider(out, format); // check_no_blank_text
    CHECK(out.find("(no output)") != std::string::npos);
    CHECK(out.find("<context>") == std::string::npos);
  }
  CHECK(convert_bundle(bundle, "anthropic.messages").find("\"system\"") == std::string::npos);
}

// https://docs.anthropic.com/en/api/messages: consecutive same-role turns
// are combined, the first must be the user's; Gemini likewise
// (https://ai.google.dev/api/generate-content#request-body: "for multi-turn
// queries … the conversation history and latest request").
TEST_CASE("anthropic and gemini: same-role turns merge, results first, a user turn first") {
  std::string bundle =
      bundle_with(segment("assistant", text("resuming")) + "," + segment("assistant", call("c1")) +
                  "," + segment("user", text("while it runs")) + "," +
                  segment("tool", result("c1")) + "," + segment("user", text("and then")));
  std::string anthropic = convert_bundle(bundle, "anthropic.messages");
  check_provider(anthropic, "anthropic.messages");
  CHECK(
      anthropic ==
      R"j({"messages":[{"role":"user","content":[{"type":"text","text":"(conversation continues)"}]},)j"
      R"({"role":"assistant","content":[{"type":"text","text":"resuming"},{"type":"tool_use","id":"c1","name":"sh","input":{"cmd":"ls"}}]},)"
      R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"x"},)"
      R"({"type":"text","text":"while it runs"},{"type":"text","text":"and then","cache_control":{"type":"ephemeral"}}]}]})");
  std::string gemini = convert_bundle(bundle, "gemini.generate_content");
  check_provider(gemini, "gemini.generate_content");
  CHECK(
      gemini ==
      R"j({"contents":[{"role":"user","parts":[{"text":"(conversation continues)"}]},)j"
      R"({"role":"model","parts":[{"text":"resuming"},{"functionCall":{"id":"c1","name":"sh","args":{"cmd":"ls"}},)"
      R"("thoughtSignature":"skip_thought_signature_validator"}]},)"
      R"({"role":"user","parts":[{"functionResponse":{"id":"c1","name":"sh","response":{"output":"x"}}},)"
      R"({"text":"while it runs"},{"text":"and then"}]}]})");
}

TEST_CASE(
    "a cancelled call's result goes as an ordinary result, error-flagged where there is one") {
  std::string bundle = bundle_with(
      segment("user", text("go")) + "," + segment("assistant", call("c1")) + "," +
      segment("tool", R"({"type":"tool_result","tool_call_id":"c1","status":"cancelled",)"
                      R"("text":"[interrupted: the user sent a new prompt]","synthetic":true})") +
      "," + segment("user", text("next")));
  const char *said = "[interrupted: the user sent a new prompt]";
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    std::string out = convert_bundle(bundle, format);
    check_provider(out, format);
    CHECK(out.find(said) != std::string::npos);
  }
  CHECK(convert_bundle(bundle, "anthropic.messages")
            .find(R"("content":"[interrupted: the user sent a new prompt]","is_error":true)") !=
        std::string::npos);
  CHECK(convert_bundle(bundle, "gemini.generate_content")
            .find(R"("response":{"error":"[interrupted)") != std::string::npos);
  CHECK(convert_bundle(bundle, "ai.sdk").find(R"("output":{"type":"error-text","value":"[inter)") !=
        std::string::npos);
  CHECK(convert_bundle(bundle, "openai.chat")
            .find(R"({"role":"tool","tool_call_id":"c1","content":"[interrupted)") !=
        std::string::npos);
}

// https://platform.openai.com/docs/guides/function-calling: the tool
// messages follow the assistant message with the tool_calls.
TEST_CASE("openai.chat: a prompt written while calls ran waits until their results") {
  std::string bundle = bundle_with(
      segment("user", text("go")) + "," + segment("assistant", call("c1") + "," + call("c2")) +
      "," + segment("tool", result("c1")) + "," + segment("user", text("while it runs")) + "," +
      segment("tool", result("c2")) + "," + segment("assistant", text("done")) + "," +
      segment("user", text("thanks")));
  std::string chat = convert_bundle(bundle, "openai.chat");
  check_provider(chat, "openai.chat");
  CHECK(chat.find(R"({"role":"tool","tool_call_id":"c1","content":"x"},)"
                  R"({"role":"tool","tool_call_id":"c2","content":"x"},)"
                  R"({"role":"user","content":[{"type":"text","text":"while it runs"}]},)"
                  R"({"role":"assistant","content":"done"})") != std::string::npos);
  for (const char *format : kProviderFormats)
    check_provider(convert_bundle(bundle, format), format);
  // The AI SDK's providers want the same.
  CHECK(convert_bundle(bundle, "ai.sdk")
            .find(R"("output":{"type":"text","value":"x"}}]},{"role":"user","content":[{"type":)"
                  R"("text","text":"while it runs"}]},{"role":"assistant")") != std::string::npos);
}

TEST_CASE("anthropic.messages: a call id the API's pattern refuses is rewritten, the same on both "
          "sides") {
  // https://docs.anthropic.com/en/api/messages: tool_use.id matches ^[a-zA-Z0-9_-]+$.
  std::string bundle = bundle_with(
      segment("user", text("go")) + "," + segment("assistant", call("call_1|fc_2")) + "," +
      segment("tool", result("call_1|fc_2")) + "," + segment("user", text("next")));
  std::string out = convert_bundle(bundle, "anthropic.messages");
  check_provider(out, "anthropic.messages"); // the schema's pattern, the pairing
  CHECK(out.find("|") == std::string::npos);
  CHECK(out.find(R"("id":"call_1_fc_2_)") != std::string::npos);
  // Ids that match pass as they are; other formats keep every id.
  CHECK(convert_bundle(bundle, "openai.chat").find(R"("id":"call_1|fc_2")") != std::string::npos);
}

// The thinking round trip: each family's opaque state back to it alone.
const std::string kThinkingTurn =
    segment("user", text("go")) + "," +
    segment("assistant",
            R"({"type":"thinking","provider":"anthropic","text":"t1","signature":"sigA"},)"
            R"({"type":"thinking","provider":"anthropic","redacted":true,"data":"redA"},)"
            R"({"type":"thinking","provider":"openai","id":"rs_1","summary":["s1","s2"],)"
            R"("encrypted_content":"encO","text":"s1\n\ns2"},)"
            R"({"type":"thinking","provider":"gemini","text":"g1","signature":"sigG"},)"
            R"({"type":"thinking","text":"no provider"},)" +
                text("ok") + "," + call("c1", R"(,"provider":"gemini","signature":"sigCall")")) +
    "," + segment("tool", result("c1"));

// The thinking turn in `format` passes the provider's checks, holds `want`
// and none of `absent` (another family's opaque state).
void check_thinking(const char *format, const std::string &want,
                    std::initializer_list<const char *> absent) {
  std::string out = convert_bundle(bundle_with(kThinkingTurn), format);
  check_provider(out, format);
  CHECK_MESSAGE(out.find(want) != std::string::npos, want);
  for (const char *foreign : absent) CHECK_MESSAGE(out.find(foreign) == std::string::npos, foreign);
}

TEST_CASE("anthropic.messages: thinking and redacted thinking back unchanged, in place") {
  // https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks
  check_thinking("anthropic.messages",
                 R"({"role":"assistant","content":[{"type":"thinking","thinking":"t1",)"
                 R"("signature":"sigA"},{"type":"redacted_thinking","data":"redA"},)"
                 R"({"type":"text","text":"ok"},{"type":"tool_use")",
                 {"encO", "rs_1", "sigG", "g1", "no provider"});
}

TEST_CASE("openai.responses: reasoning items replayed before what they preceded") {
  // https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context
  check_thinking("openai.responses",
                 R"({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text",)"
                 R"("text":"s1"},{"type":"summary_text","text":"s2"}],"encrypted_content":)"
                 R"("encO"},{"type":"message","role":"assistant","content":"ok"},)"
                 R"({"type":"function_call","call_id":"c1")",
                 {"sigA", "redA", "sigG", "g1", "no provider"});
}

TEST_CASE("gemini: thoughts and the call's thoughtSignature back to Gemini") {
  // https://ai.google.dev/gemini-api/docs/thought-signatures
  check_thinking("gemini.generate_content",
                 R"({"role":"model","parts":[{"text":"g1","thought":true,"thoughtSignature":)"
                 R"("sigG"},{"text":"ok"},{"functionCall":{"id":"c1","name":"sh","args":{"cmd":)"
                 R"("ls"}},"thoughtSignature":"sigCall"}]})",
                 {"sigA", "redA", "encO", "rs_1", "no provider"});
}

TEST_CASE("ai.sdk: reasoning parts keyed by the provider that made them") {
  std::string out = convert_bundle(bundle_with(kThinkingTurn), "ai.sdk");
  check_provider(out, "ai.sdk");
  CHECK(
      out.find(
          R"({"role":"assistant","content":[)"
          R"({"type":"reasoning","text":"t1","providerOptions":{"anthropic":{"signature":"sigA"}}},)"
          R"({"type":"reasoning","text":"","providerOptions":{"anthropic":{"redactedData":"redA"}}},)"
          R"({"type":"reasoning","text":"s1","providerOptions":{"openai":{"itemId":"rs_1","reasoningEncryptedContent":"encO"}}},)"
          R"({"type":"reasoning","text":"s2","providerOptions":{"openai":{"itemId":"rs_1","reasoningEncryptedContent":"encO"}}},)"
          R"({"type":"reasoning","text":"g1","providerOptions":{"google":{"thoughtSignature":"sigG"}}},)"
          R"({"type":"text","text":"ok"},{"type":"tool-call","toolCallId":"c1","toolName":"sh",)"
          R"("input":{"cmd":"ls"},"providerOptions":{"google":{"thoughtSignature":"sigCall"}}}]})") !=
      std::string::npos);
  CHECK(out.find("no provider") == std::string::npos);
}

TEST_CASE("openai.chat takes no reasoning input") {
  std::string out = convert_bundle(bundle_with(kThinkingTurn), "openai.chat");
  check_provider(out, "openai.chat");
  for (const char *opaque : {"sigA", "redA", "encO", "rs_1", "sigG", "g1", "t1", "sigCall"})
    CHECK(out.find(opaque) == std::string::npos);
}

TEST_CASE("anthropic thinking without a signature is not sent, nor given a breakpoint") {
  std::string bundle = bundle_with(
      segment("user", text("go"), "message", 10) + "," +
          segment("assistant",
                  text("a") + R"(,{"type":"thinking","provider":"anthropic","text":"unsigned"},)" +
                      R"({"type":"thinking","provider":"anthropic","text":"t","signature":"s"})",
                  "message", 10) +
          "," + segment("user", text("more"), "message", 10),
      20);
  std::string out = convert_bundle(bundle, "anthropic.messages");
  check_provider(out, "anthropic.messages");
  CHECK(out.find("unsigned") == std::string::npos);
  // The stable prefix ends at the assistant's segment: the breakpoint goes
  // on its text, not on the thinking after it.
  CHECK(out.find(R"({"type":"text","text":"a","cache_control":{"type":"ephemeral"}})") !=
        std::string::npos);
}

TEST_CASE("anthropic: a continuation's final assistant text loses its trailing whitespace") {
  std::string bundle =
      bundle_with(segment("user", text("go")) + "," + segment("assistant", text("partial \\n")));
  std::string out = convert_bundle(bundle, "anthropic.messages");
  check_provider(out, "anthropic.messages");
  CHECK(out.find(R"("text":"partial","cache_control")") != std::string::npos);
}

// Images from their artifacts, in each provider's native shape.
struct ImageDb {
  test::TempDir dir;
  Engine db{dir.file("images.ctxdb"), ""};
  std::string png = std::string("\x89PNG\r\n\x1a\n", 8) + "pixels of a screenshot";
  std::string id;
  std::string b64 = util::encode_base64(png);
  ImageDb() {
    simdjson::dom::parser p;
    id = str(json::parse(p, db.artifact_put(png, "{}"), "artifact"), "id");
  }
  std::string image(const std::string &artifact, const char *mime = "image/png") const {
    return R"({"type":"image","artifact_id":")" + artifact + R"(","mime_type":")" + mime +
           R"(","bytes":30})";
  }
  std::string bundle(const std::string &artifact, const char *mime = "image/png") const {
    return bundle_with(
        segment("user", text("look") + "," + image(artifact, mime)) + "," +
        segment("assistant", call("c1")) + "," +
        segment("tool", R"({"type":"tool_result","tool_call_id":"c1","status":"success",)"
                        R"("text":"shot","content":[)" +
                            image(artifact, mime) + "]}") +
        "," + segment("user", text("and?")));
  }
};

TEST_CASE("images reach every format in its native shape, read from the artifact") {
  ImageDb d;
  std::string bundle = d.bundle(d.id);
  // A prompt between two results waits, after the images, until both are in.
  std::string split =
      bundle_with(segment("user", text("go")) + "," +
                  segment("assistant", call("c1") + "," + call("c2")) + "," +
                  segment("tool", R"({"type":"tool_result","tool_call_id":"c1","status":"success",)"
                                  R"("text":"shot","content":[)" +
                                      d.image(d.id) + "]}") +
                  "," + segment("user", text("meanwhile")) + "," + segment("tool", result("c2")));
  std::string chat = d.db.bundle_convert(split, "openai.chat");
  check_provider(chat, "openai.chat");
  CHECK(chat.find(R"({"role":"tool","tool_call_id":"c2","content":"x"},{"role":"user","content":)"
                  R"([{"type":"text","text":"Images from the result of tool call c1 (sh):"},)") !=
        std::string::npos);
  CHECK(chat.find(R"("}}]},{"role":"user","content":[{"type":"text","text":"meanwhile"}]}]})") !=
        std::string::npos);
  std::map<std::string, std::vector<std::string>> want = {
      // https://platform.openai.com/docs/guides/images-vision: data URLs;
      // tool messages take text, so the result's image follows in a user
      // message naming the call.
      {"openai.chat",
       {R"({"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,)" +
            d.b64 + "\"}}",
        R"({"role":"tool","tool_call_id":"c1","content":"shot"},{"role":"user","content":[)"
        R"({"type":"text","text":"Images from the result of tool call c1 (sh):"},)"
        R"({"type":"image_url","image_url":{"url":"data:image/png;base64,)" +
            d.b64 + "\"}}]}"}},
      // https://platform.openai.com/docs/api-reference/responses/create
      {"openai.responses",
       {R"({"type":"input_image","image_url":"data:image/png;base64,)" + d.b64 +
            R"(","detail":"auto"})",
        R"({"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"shot"},)"
        R"({"type":"input_image","image_url":"data:image/png;base64,)" +
            d.b64 + R"(","detail":"auto"}]})"}},
      // https://docs.anthropic.com/en/docs/build-with-claude/vision
      {"anthropic.messages",
       {R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":")" + d.b64 +
            "\"}}",
        R"({"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"shot"},)"
        R"({"type":"image","source":{"type":"base64","media_type":"image/png","data":")" +
            d.b64 + "\"}}]}"}},
      // https://ai.google.dev/gemini-api/docs/image-understanding
      {"gemini.generate_content",
       {R"({"text":"look"},{"inlineData":{"mimeType":"image/png","data":")" + d.b64 + "\"}}",
        R"("response":{"output":"shot"}}},{"inlineData":{"mimeType":"image/png","data":")" + d.b64 +
            "\"}}"}},
      {"ai.sdk",
       {R"({"type":"image","image":")" + d.b64 + R"(","mediaType":"image/png"})",
        R"("output":{"type":"content","value":[{"type":"text","text":"shot"},)"
        R"({"type":"image-data","data":")" +
            d.b64 + R"(","mediaType":"image/png"}]}})"}},
  };
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    std::string out = d.db.bundle_convert(bundle, format);
    check_provider(out, format);
    for (const std::string &piece : want[format])
      CHECK_MESSAGE(out.find(piece) != std::string::npos, piece);
  }
  // Without a reader (the engine always has one) an image is its placeholder.
  CHECK(convert_bundle(bundle, "anthropic.messages")
            .find("[image: artifact " + d.id + ", image/png]") != std::string::npos);
}

TEST_CASE("images beyond a provider's documented limits become placeholders, the newest kept") {
  ImageDb d;
  // https://docs.anthropic.com/en/docs/build-with-claude/vision: at most
  // 100 images per request.
  std::string images;
  for (int i = 0; i < 101; ++i) images += (i ? "," : "") + d.image(d.id);
  std::string many = bundle_with(segment("user", images) + "," + segment("user", text("and?")));
  std::string out = d.db.bundle_convert(many, "anthropic.messages");
  check_provider(out, "anthropic.messages");
  CHECK(out.find(R"("content":[{"type":"text","text":"[image: artifact )" + d.id +
                 ", image/png; omitted: beyond Anthropic's 100 images per request]\"},"
                 R"({"type":"image")") != std::string::npos);
  size_t sent = 0;
  for (size_t at = 0; (at = out.find(d.b64, at)) != std::string::npos; at += d.b64.size()) ++sent;
  CHECK(sent == 100);
  CHECK(d.db.bundle_convert(many, "openai.chat").find("omitted") == std::string::npos);

  // 5 MB per image for Anthropic; Gemini takes up to 20 MB inline.
  simdjson::dom::parser p;
  std::string big = str(
      json::parse(p, d.db.artifact_put(std::string(4 * 1024 * 1024, 'a'), "{}"), "artifact"), "id");
  std::string large = bundle_with(segment("user", text("look") + "," + d.image(big)));
  CHECK(d.db.bundle_convert(large, "anthropic.messages")
            .find("omitted: larger than Anthropic's limit per image") != std::string::npos);
  CHECK(d.db.bundle_convert(large, "gemini.generate_content").find("omitted") == std::string::npos);
}

TEST_CASE("images kept inline by the host are sent as they are") {
  std::string bundle = bundle_with(segment(
      "user", text("look") + R"(,{"type":"image","data":"iVBORw0KGgo=","mime_type":"image/png"})"));
  std::string out = convert_bundle(bundle, "anthropic.messages");
  check_provider(out, "anthropic.messages");
  CHECK(out.find(R"("source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="})") !=
        std::string::npos);
  std::string bmp = bundle_with(
      segment("user", text("look") + R"(,{"type":"image","data":"Qk0=","mime_type":"image/bmp"})"));
  CHECK(convert_bundle(bmp, "openai.chat").find("[image: inline, image/bmp]") != std::string::npos);
}

TEST_CASE("a tool result's image left out to fit sends its placeholder with the result") {
  std::string bundle = bundle_with(
      segment("assistant", R"({"type":"tool_call","id":"c1","name":"screenshot"})") + "," +
      segment("tool",
              R"({"type":"tool_result","tool_call_id":"c1","status":"success",)"
              R"("text":"taken","content":[{"type":"text","text":"[image omitted: a1]"}]})"));
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    std::string out = convert_bundle(bundle, format);
    check_provider(out, format);
    CHECK(out.find("taken\\n\\n[image omitted: a1]") != std::string::npos);
  }
}

TEST_CASE("images: an unknown artifact is not found, a type the provider refuses a placeholder") {
  ImageDb d;
  std::string missing = "art_" + std::string(64, '0');
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    CHECK(test::code_of([&] { d.db.bundle_convert(d.bundle(missing), format); }) ==
          Code::kNotFound);
    try {
      d.db.bundle_convert(d.bundle(missing), format);
    } catch (const Error &e) {
      CHECK(std::string(e.what()).find(missing) != std::string::npos);
      CHECK(std::string(e.what()).find("segments[0].content[1].artifact_id") != std::string::npos);
    }
    std::string out = d.db.bundle_convert(d.bundle(d.id, "image/bmp"), format);
    check_provider(out, format);
    CHECK(out.find(d.b64) == std::string::npos);
    CHECK(out.find("[image: artifact " + d.id + ", image/bmp]") != std::string::npos);
  }
  // An id no artifact can have is the caller's mistake, named with its block.
  CHECK(test::code_of([&] { d.db.bundle_convert(d.bundle("art_x"), "ai.sdk"); }) ==
        Code::kInvalidArg);
  // Gemini documents no GIF; the others take it.
  CHECK(d.db.bundle_convert(d.bundle(d.id, "image/gif"), "gemini.generate_content").find(d.b64) ==
        std::string::npos);
  CHECK(d.db.bundle_convert(d.bundle(d.id, "image/gif"), "anthropic.messages").find(d.b64) !=
        std::string::npos);
}

// Two consecutive compiles: the second bundle is the first plus a turn. The
// outputs share their serialized prefix up to where the first one's latest
// turn context begins (Anthropic: the tail breakpoint is on the block just
// before it), so the provider's prompt cache covers the whole history.
TEST_CASE("two consecutive turns share the output prefix up to the cache breakpoint") {
  std::string head = segment("system", text("sys"), "instructions", 10) + "," + kToolsSegment +
                     "," + segment("context", text("summary"), "summary", 10) + "," +
                     segment("user", text("u1"), "message", 10) + "," +
                     segment("assistant", call("c1"), "message", 10) + "," +
                     segment("tool", result("c1"), "message", 10);
  std::string first = bundle_with(head + "," + segment("context", text("Plan: a"), "plan"), 50);
  std::string second = bundle_with(head + "," + segment("assistant", text("done"), "message", 10) +
                                       "," + segment("user", text("u2"), "message", 10) + "," +
                                       segment("context", text("Plan: b"), "plan"),
                                   80);
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    std::string a = convert_bundle(first, format), b = convert_bundle(second, format);
    check_provider(a, format);
    check_provider(b, format);
    a = without_breakpoints(a);
    b = without_breakpoints(b);
    size_t end = a.find(kLatestContextOpener.at(format));
    REQUIRE(end != std::string::npos);
    CHECK(end > a.find("\"x\"")); // the history, the tool result included
    CHECK(b.compare(0, end, a, 0, end) == 0);
    // The tools are the same too (they come first in the provider's prompt).
    CHECK(a.substr(a.rfind("\"tools\"")) == b.substr(b.rfind("\"tools\"")));
  }
}

TEST_CASE("anthropic.messages: the stable-prefix breakpoint is never doubled nor invented") {
  std::string segments = segment("system", text("sys"), "instructions") + "," + kToolsSegment +
                         "," + segment("user", text("u1")) + "," +
                         segment("assistant", text("a1")) + "," + segment("user", text("u2"));
  auto breakpoints = [&](int stable) {
    std::string out = convert_bundle(bundle_with(segments, stable), "anthropic.messages");
    check_schema(out, "anthropic.messages");
    return anthropic_breakpoints(out);
  };
  CHECK(breakpoints(0) == 3);   // no stable prefix
  CHECK(breakpoints(5) == 3);   // the first segment alone is longer
  CHECK(breakpoints(40) == 3);  // ends at the tools segment: the last tool has one
  CHECK(breakpoints(50) == 4);  // ends at u1
  CHECK(breakpoints(70) == 3);  // ends at u2, the tail
  CHECK(breakpoints(500) == 3); // everything
}

TEST_CASE("anthropic.messages: string args that are not an object are wrapped") {
  std::string out =
      convert_bundle(read_fixture("resumed_session.bundle.json"), "anthropic.messages");
  simdjson::dom::parser p;
  simdjson::dom::array messages = array_at(p.parse(out), "messages");
  CHECK(minify(messages.at(0).value()) ==
        R"j({"role":"user","content":[{"type":"text","text":"(conversation continues)"}]})j");
  simdjson::dom::array calls = messages.at(1).value()["content"].get_array().value();
  CHECK(minify(calls.at(1).value()["input"]) == R"({"input":"TokenVerifier"})");
  CHECK(minify(calls.at(2).value()["input"]) == R"({"input":"[\"build\",\"//svc/auth:all\"]"})");
  simdjson::dom::element pruned = messages.at(2).value()["content"].at(0).value();
  CHECK(str(pruned, "content") == "[output in artifact art_0c3d9a11f2e84b07]");
}

TEST_CASE("openai.responses: strict is off and parameters present on every tool") {
  std::string out = convert_bundle(read_fixture("resumed_session.bundle.json"), "openai.responses");
  simdjson::dom::parser p;
  simdjson::dom::element grep = p.parse(out)["tools"].at(0).value();
  CHECK(minify(grep) ==
        R"({"type":"function","name":"grep","parameters":{"type":"object","properties":{}},)"
        R"("strict":false})");
}

TEST_CASE("openai formats: an assistant turn keeps its order and a call answers in place") {
  std::string bundle = bundle_with(
      segment("user", text("go")) + "," +
      segment("assistant",
              text("look") +
                  R"(,{"type":"tool_call","id":"c1","name":"sh","args":"{\"cmd\":\"ls\"}"},)" +
                  text("then")) +
      "," + segment("tool", R"({"type":"tool_result","tool_call_id":"c1","status":"error"})"));
  std::string responses = convert_bundle(bundle, "openai.responses");
  check_provider(responses, "openai.responses");
  CHECK(responses.find(
            R"({"type":"message","role":"assistant","content":"look"},)"
            R"({"type":"function_call","call_id":"c1","name":"sh","arguments":"{\"cmd\":\"ls\"}"},)"
            R"({"type":"message","role":"assistant","content":"then"},)"
            R"j({"type":"function_call_output","call_id":"c1","output":"(no output)"}]})j") !=
        std::string::npos);
  std::string chat = convert_bundle(bundle, "openai.chat");
  check_provider(chat, "openai.chat");
  CHECK(chat.find(R"("content":"look\n\nthen","tool_calls")") != std::string::npos);
}

TEST_CASE("openai.chat: a refusal is a refusal part beside the texts") {
  std::string bundle = bundle_with(
      segment("user", text("do it")) + "," +
      segment("assistant",
              text("sorry") + R"(,{"type":"refusal","text":"I can't help with that."})") +
      "," + segment("user", text("why?")));
  std::string chat = convert_bundle(bundle, "openai.chat");
  check_provider(chat, "openai.chat");
  CHECK(chat.find(R"({"role":"assistant","content":[{"type":"text","text":"sorry"},)"
                  R"({"type":"refusal","refusal":"I can't help with that."}]})") !=
        std::string::npos);
  for (const char *format : kProviderFormats)
    check_provider(convert_bundle(bundle, format), format);
}

TEST_CASE("an empty bundle converts to an empty conversation") {
  std::string bundle = bundle_with("");
  CHECK(convert_bundle(bundle, "openai.chat") == R"({"messages":[]})");
  CHECK(convert_bundle(bundle, "openai.responses") == R"({"input":[]})");
  CHECK(convert_bundle(bundle, "anthropic.messages") == R"({"messages":[]})");
  CHECK(convert_bundle(bundle, "gemini.generate_content") == R"({"contents":[]})");
  CHECK(convert_bundle(bundle, "ai.sdk") == R"({"messages":[]})");
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
  CHECK(msg.find("gemini.generate_content, ai.sdk") != std::string::npos);
  CHECK(code_of([&] { convert_bundle("{\"segments\":[", "openai.chat"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { convert_bundle("", "canonical"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { convert_bundle("[]", "canonical"); }) == Code::kInvalidArg);
  std::string no_hash = good.substr(0, good.rfind(",\"hash\"")) + "}";
  CHECK(code_of([&] { convert_bundle(no_hash, "anthropic.messages"); }) == Code::kInvalidArg);
  CHECK(error_message(no_hash, "anthropic.messages").find("hash") != std::string::npos);
  std::string bad_kind = bundle_with(segment("user", text("hi"), "chatter"));
  CHECK(error_message(bad_kind, "openai.chat").find("segments[0].kind") != std::string::npos);
  std::string bad_role = bundle_with(segment("narrator", text("hi")));
  CHECK(error_message(bad_role, "ai.sdk").find("segments[0].role") != std::string::npos);

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
  refused(segment("context", R"({"type":"image","artifact_id":"a"})"),
          "segments[0].content[0].type");
  refused(segment("assistant", R"({"type":"thinking","provider":"openai","summary":[1]})"),
          "segments[0].content[0].summary");
  refused(segment("tool",
                  R"({"type":"tool_result","tool_call_id":"c","content":[{"type":"thinking"}]})"),
          "segments[0].content[0].content[0].type");
  refused(
      segment("tool", R"({"type":"tool_result","tool_call_id":"c","content":[{"type":"text"}]})"),
      "segments[0].content[0].content[0].text");
  refused(segment("system", R"({"type":"tool_specs","tools":[{}]})", "tools"),
          "segments[0].content[0].tools[0].name");
}

namespace {

// A session appended through the engine and compiled into each format: the
// compile passes the database's artifacts to the adapters.
struct CompiledSession {
  test::TempDir dir;
  Engine db{dir.file("session.ctxdb"), ""};
  std::string png = util::encode_base64(std::string("\x89PNG\r\n\x1a\n", 8) + "a chart");
  CompiledSession() {
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
    db.append("s", test::event("UserPromptSubmitted", "user", R"({"text":"plot it"})"));
    db.append("s", test::event(
                       "AssistantMessageCreated", "assistant",
                       R"({"content":[{"type":"thinking","provider":"anthropic","text":"plan",)"
                       R"("signature":"sigE2E"},{"type":"text","text":"\n\n"},)"
                       R"({"type":"image","data":")" +
                           png +
                           R"(","mime_type":"image/png"},{"type":"text","text":"here"},)"
                           R"({"type":"tool_call","id":"c1","name":"sh","args":{"cmd":"ls"}}]})"));
    db.append("s", test::event("ToolCallFinished", "tool",
                               R"({"tool_call_id":"c1","output":"ok","duration_ms":1})"));
  }
  std::string compile(const char *format) {
    return db.compile(R"({"session_id":"s","max_tokens":8000,"request":"and now?","format":")" +
                      std::string(format) + "\"}");
  }
};

} // namespace

TEST_CASE("compiled sessions: every format passes its checks; thinking and images reach theirs") {
  CompiledSession s;
  for (const char *format : kProviderFormats) {
    CAPTURE(format);
    std::string out = s.compile(format);
    check_provider(out, format);
    CHECK(out.find("\"and now?\"") != std::string::npos);
  }
  CHECK(s.compile("anthropic.messages").find(R"("thinking":"plan","signature":"sigE2E")") !=
        std::string::npos);
  CHECK(s.compile("openai.chat").find("sigE2E") == std::string::npos);
  // The model's image, spilled into an artifact at append, read back as
  // bytes: Gemini takes it in a model turn, the AI SDK as a file part;
  // Anthropic and OpenAI assistant turns take no images, so it is named.
  CHECK(s.compile("gemini.generate_content")
            .find(R"({"inlineData":{"mimeType":"image/png","data":")" + s.png + "\"}}") !=
        std::string::npos);
  CHECK(s.compile("ai.sdk").find(R"({"type":"file","data":")" + s.png +
                                 R"(","mediaType":"image/png"})") != std::string::npos);
  for (const char *format : {"anthropic.messages", "openai.chat", "openai.responses"}) {
    CAPTURE(format);
    std::string out = s.compile(format);
    CHECK(out.find(s.png) == std::string::npos);
    CHECK(out.find("[image: artifact art_") != std::string::npos);
  }
}

} // namespace adapters_test
