// provider_checks.hpp — what every provider documents about its request,
// checked on an adapter's output: the shape (JSON Schemas in
// tests/fixtures/providers/, written from each provider's documentation)
// and the rules a schema cannot express (tool-call/result adjacency, role
// alternation, thinking placement, blank texts). Used by the adapters'
// tests and by every test that compiles imported or recorded sessions.
#pragma once

#include "error.hpp"
#include "json/json_schema.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace ctxdb::test::provider_checks {

using simdjson::dom::element;

inline const std::filesystem::path kFixtures =
    std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" / "providers";

inline std::string read_fixture(const std::string &name) {
  std::ifstream in(kFixtures / name, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline const char *const kProviderFormats[] = {
    "openai.chat", "openai.responses", "anthropic.messages", "gemini.generate_content", "ai.sdk"};

inline std::string schema_name(std::string_view format) {
  std::string s(format);
  for (char &c : s)
    if (c == '.') c = '_';
  return s + ".request.schema.json";
}

// (a) the output has the provider's documented shape.
inline void check_schema(const std::string &out, std::string_view format) {
  std::string name = schema_name(format);
  json::Schema schema = json::Schema::parse(read_fixture(name), name);
  simdjson::dom::parser p;
  INFO(format << ": " << out);
  CHECK_NOTHROW(schema.validate(json::parse(p, out, "output"), "request"));
}

inline std::string str(element e, const char *key) {
  return std::string(e[key].get_string().value());
}

inline bool has(element e, const char *key) { return !e[key].error(); }

// By value, so that a range-for does not iterate a destroyed temporary.
inline simdjson::dom::array array_at(element e, const char *key) {
  return e[key].get_array().value();
}

inline bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

// No text block anywhere is empty or whitespace only: Anthropic refuses
// them ("text content blocks must contain non-whitespace text",
// https://docs.anthropic.com/en/api/messages), and no provider reads one.
// Reasoning parts are opaque state, not text the model reads.
inline void check_no_blank_text(element e) {
  if (e.is_array())
    for (element v : simdjson::dom::array(e)) check_no_blank_text(v);
  if (!e.is_object()) return;
  std::string_view type, text;
  bool reasoning = !e["type"].get(type) && type == "reasoning";
  if (!reasoning && !e["text"].get(text)) CHECK_MESSAGE(!blank(text), "a blank text block");
  for (auto [k, v] : simdjson::dom::object(e)) check_no_blank_text(v);
}

// (b) the rules the schemas cannot express. OpenAI Chat
// (https://platform.openai.com/docs/guides/function-calling): a tool message
// answers a call of the assistant message just before it (only tool messages
// between); every call is answered before the next non-tool message;
// content is null only beside tool_calls; tool content is text only.
inline void check_openai_chat(element doc) {
  std::set<std::string> open;
  for (element m : array_at(doc, "messages")) {
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
      for (element c : calls) CHECK(open.insert(str(c, "id")).second);
    } else {
      CHECK_FALSE(m["content"].is_null());
    }
  }
  CHECK_MESSAGE(open.empty(), "calls left unanswered at the end");
}

// Responses (https://platform.openai.com/docs/guides/function-calling):
// every function_call_output answers an earlier function_call, each call is
// answered; a reasoning item is followed by the item it preceded
// (https://platform.openai.com/docs/guides/reasoning).
inline void check_openai_responses(element doc) {
  std::set<std::string> calls, answered;
  std::string prev;
  for (element item : array_at(doc, "input")) {
    std::string type = str(item, "type");
    if (prev == "reasoning") CHECK(type != "function_call_output");
    if (type == "function_call") {
      CHECK(calls.insert(str(item, "call_id")).second);
    } else if (type == "function_call_output") {
      CHECK_MESSAGE(calls.count(str(item, "call_id")) == 1,
                    "output without an earlier call: " << str(item, "call_id"));
      CHECK(answered.insert(str(item, "call_id")).second);
    } else if (type == "message" && str(item, "role") == "assistant") {
      CHECK(item["content"].is_string());
    }
    prev = type;
  }
  CHECK(calls == answered);
}

// Anthropic (https://docs.anthropic.com/en/api/messages and
// https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use):
// the first message is the user's and roles alternate strictly; in a user
// message the tool_result blocks come first, each answering a tool_use of
// the assistant message just before, and every tool_use there is answered;
// thinking only in assistant turns, never with cache_control; at most 4
// cache_control in all
// (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching).
// Returns how many there are.
inline int check_anthropic(element doc) {
  int cache = 0;
  auto count = [&](element e) { cache += has(e, "cache_control") ? 1 : 0; };
  simdjson::dom::array list;
  if (!doc["system"].get(list))
    for (element b : list) count(b);
  if (!doc["tools"].get(list))
    for (element t : list) count(t);
  std::string prev;
  std::set<std::string> uses;
  bool first = true;
  for (element m : array_at(doc, "messages")) {
    std::string role = str(m, "role");
    if (first) CHECK(role == "user");
    CHECK(role != prev);
    std::set<std::string> answered;
    bool past_results = false;
    for (element b : array_at(m, "content")) {
      count(b);
      std::string type = str(b, "type");
      if (type == "thinking" || type == "redacted_thinking") {
        CHECK(role == "assistant");
        CHECK_FALSE(has(b, "cache_control"));
      }
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
      for (element b : array_at(m, "content"))
        if (str(b, "type") == "tool_use") uses.insert(str(b, "id"));
    prev = role;
    first = false;
  }
  CHECK(cache <= 4);
  return cache;
}

// Gemini (https://ai.google.dev/gemini-api/docs/function-calling): contents
// alternate user / model starting with the user; the functionResponse parts
// of a user content answer the functionCall parts of the model content just
// before, all of them, by id and name.
inline void check_gemini(element doc) {
  std::string prev;
  std::map<std::string, std::string> calls;
  bool first = true;
  for (element c : array_at(doc, "contents")) {
    std::string role = str(c, "role");
    if (first) CHECK(role == "user");
    CHECK(role != prev);
    std::map<std::string, std::string> answered;
    for (element part : array_at(c, "parts")) {
      if (has(part, "functionResponse")) {
        CHECK(role == "user");
        element r = part["functionResponse"].value();
        answered[str(r, "id")] = str(r, "name");
      }
      if (has(part, "thought")) CHECK(role == "model");
    }
    if (role == "user") CHECK_MESSAGE(answered == calls, "functionCall left unanswered");
    calls.clear();
    if (role == "model")
      for (element part : array_at(c, "parts"))
        if (has(part, "functionCall")) {
          element f = part["functionCall"].value();
          calls[str(f, "id")] = str(f, "name");
          CHECK(has(part, "thoughtSignature"));
        }
    prev = role;
    first = false;
  }
}

// AI SDK (packages/provider-utils/src/types/model-message.ts): tool-result
// parts live in tool messages and answer an earlier tool-call by id and
// name; every call is answered.
inline void check_ai_sdk(element doc) {
  std::map<std::string, std::string> calls, answered;
  for (element m : array_at(doc, "messages")) {
    std::string role = str(m, "role");
    if (role == "system") {
      CHECK(m["content"].is_string());
      continue;
    }
    for (element part : array_at(m, "content")) {
      std::string type = str(part, "type");
      if (type == "tool-call") {
        CHECK(role == "assistant");
        calls[str(part, "toolCallId")] = str(part, "toolName");
      }
      if (type == "tool-result") {
        CHECK(role == "tool");
        CHECK(calls[str(part, "toolCallId")] == str(part, "toolName"));
        answered[str(part, "toolCallId")] = str(part, "toolName");
      }
      if (role == "tool") CHECK(type == "tool-result");
    }
  }
  CHECK(calls == answered);
}

inline void check_provider(const std::string &out, std::string_view format) {
  check_schema(out, format);
  INFO(format << ": " << out);
  simdjson::dom::parser p;
  element doc = json::parse(p, out, "output");
  check_no_blank_text(doc);
  if (format == "openai.chat") check_openai_chat(doc);
  if (format == "openai.responses") check_openai_responses(doc);
  if (format == "anthropic.messages") check_anthropic(doc);
  if (format == "gemini.generate_content") check_gemini(doc);
  if (format == "ai.sdk") check_ai_sdk(doc);
}

} // namespace ctxdb::test::provider_checks
