// bundle_checks.hpp — a compiled bundle read back, and the invariants every
// bundle keeps (DESIGN §11: 1 and 12, and the budget), for the tests of the
// compiler and of what feeds it (compaction).
#pragma once

#include "engine.hpp"
#include "error.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ctxdb::test {

// A bundle read back: segments and exclusions as parsed JSON.
struct Bundle {
  std::string json;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  explicit Bundle(std::string j) : json(std::move(j)) { doc = parser.parse(json).value(); }
  simdjson::dom::array segments() { return doc["segments"].get_array().value(); }
  std::vector<std::string> ids() {
    std::vector<std::string> out;
    for (auto s : segments()) out.emplace_back(s["id"].get_string().value());
    return out;
  }
  std::vector<std::string> excluded_ids() {
    std::vector<std::string> out;
    for (auto s : doc["excluded"].get_array()) out.emplace_back(s["id"].get_string().value());
    return out;
  }
  int64_t used() { return doc["budget"]["used"].get_int64().value(); }
  bool has(const std::string &id) {
    auto all = ids();
    return std::find(all.begin(), all.end(), id) != all.end();
  }
  std::string reason_of_excluded(const std::string &id) {
    for (auto s : doc["excluded"].get_array())
      if (s["id"].get_string().value() == id) return std::string(s["reason"].get_string().value());
    return "";
  }
};

// Where the latest turn's context block starts in each provider format's
// output, when the conversation ends on a tool result: what consecutive
// compiles share ends there.
inline const std::map<std::string, std::string> kLatestContextOpener = {
    {"openai.chat", R"({"role":"user","content":[{"type":"text","text":"<context>)"},
    {"openai.responses", R"({"type":"message","role":"user","content":[{"type":"input_text",)"
                         R"("text":"<context>)"},
    {"anthropic.messages", R"(,{"type":"text","text":"<context>)"},
    {"gemini.generate_content", R"(,{"text":"<context>)"},
    {"ai.sdk", R"({"role":"user","content":[{"type":"text","text":"<context>)"},
};

// An output without Anthropic's cache breakpoints, which move as the
// conversation grows.
inline std::string without_breakpoints(std::string s) {
  const std::string mark = R"(,"cache_control":{"type":"ephemeral"})";
  for (size_t at; (at = s.find(mark)) != std::string::npos;) s.erase(at, mark.size());
  return s;
}

// DESIGN §11 invariants 1 and 12 and the budget, on any bundle: every tool
// result follows its call, every call has a result in the bundle (one on
// the path, a synthetic cancelled one, or one the request gave: no call is
// ever sent without its result), every segment is explained and sourced,
// and the segments sum to what the budget says. And the placement the
// adapters rely on: context segments stand before the conversation or
// after it, never inside, and the conversation ends on what the model must
// answer (a user or tool segment; an assistant one only when the host asked
// for a continuation).
inline void check_bundle(Bundle &b, bool continuation = false) {
  std::set<std::string> calls, results;
  int64_t sum = 0;
  std::string last_role;      // of the last conversation segment
  bool context_after = false; // a context segment after a conversation one
  for (auto s : b.segments()) {
    sum += s["tokens"].get_int64().value();
    std::string role(s["role"].get_string().value());
    if (role == "user" || role == "assistant" || role == "tool") {
      INFO("conversation after the latest-turn context in " << b.json);
      CHECK_FALSE(context_after);
      last_role = role;
    } else if (role == "context") {
      if (!last_role.empty()) context_after = true;
      for (auto block : s["content"].get_array())
        CHECK(block["type"].get_string().value() == "text");
    }
    CHECK(!s["reason"].get_string().value().empty());
    CHECK(s["sources"].get_array().size() > 0);
    for (auto block : s["content"].get_array()) {
      std::string_view type = block["type"].get_string().value();
      if (type == "tool_call") calls.insert(std::string(block["id"].get_string().value()));
      if (type == "tool_result") {
        std::string id(block["tool_call_id"].get_string().value());
        INFO("result " << id << " in " << b.json);
        CHECK(calls.count(id) == 1); // its call came before it
        results.insert(id);
      }
    }
  }
  for (const std::string &c : calls) {
    INFO("call " << c << " without its result in " << b.json);
    CHECK(results.count(c) == 1);
  }
  if (!last_role.empty()) {
    INFO("the conversation ends on " << last_role << " in " << b.json);
    CHECK((last_role == "user" || last_role == "tool" || continuation));
  }
  CHECK(sum == b.used());
  CHECK(b.used() <= b.doc["budget"]["available"].get_int64().value());
}

// What a host does when a compile refuses: it answers the call the error
// names (with a result in tool_results) or asks for a continuation when the
// branch ends on an answer. The bundle of session "s", once compiled, and
// what was given.
struct HostCompile {
  std::string json;
  std::vector<std::string> given; // calls answered through tool_results
  bool continuation = false;
  bool budget = false; // refused: the never-dropped content alone is too large
};

inline HostCompile compile_as_host(Engine &db, int64_t budget, const std::string &extra,
                                   const std::vector<std::string> &open_calls) {
  HostCompile h;
  for (;;) {
    std::string results;
    for (const std::string &id : h.given)
      results += (results.empty() ? "" : ",") + std::string(R"({"tool_call_id":")") + id +
                 R"(","output":"done"})";
    std::string more = extra;
    auto join = [&](const std::string &f) { more += (more.empty() ? "" : ",") + f; };
    if (!results.empty()) join(R"("tool_results":[)" + results + "]");
    if (h.continuation) join(R"("continuation":true)");
    try {
      h.json = db.compile(R"({"session_id":"s","max_tokens":)" + std::to_string(budget) +
                          (more.empty() ? "" : "," + more) + "}");
      return h;
    } catch (const Error &e) {
      if (e.code() == Code::kBudget) {
        h.budget = true;
        return h;
      }
      std::string why = e.what();
      INFO(why);
      REQUIRE(e.code() == Code::kConflict);
      if (why.find("finished answer") != std::string::npos) {
        REQUIRE_FALSE(h.continuation);
        h.continuation = true;
        continue;
      }
      size_t at = why.find("tool call '");
      REQUIRE(at != std::string::npos);
      at += 11;
      std::string id = why.substr(at, why.find('\'', at) - at);
      // Only a call with no result yet, and each named once.
      REQUIRE(std::find(open_calls.begin(), open_calls.end(), id) != open_calls.end());
      REQUIRE(std::find(h.given.begin(), h.given.end(), id) == h.given.end());
      h.given.push_back(id);
    }
  }
}

} // namespace ctxdb::test
