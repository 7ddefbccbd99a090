// Event lines of an agent session for the projection tests, and readers of
// the JSON the views return.
#pragma once

#include "test_util.hpp"

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::test {

// An event line; `extra` holds more envelope fields, e.g. after(id).
inline std::string event(const std::string &type, const std::string &actor,
                         const std::string &payload, const std::string &extra = "") {
  return R"({"type":")" + type + R"(","actor":")" + actor + R"(","payload":)" + payload +
         (extra.empty() ? "" : "," + extra) + "}";
}
// Envelope fields: the parent event (a non-leaf parent forks), or the branch.
inline std::string after(const std::string &event_id) {
  return R"("parent_id":")" + event_id + "\"";
}
inline std::string on(const std::string &branch) { return R"("branch_id":")" + branch + "\""; }

inline std::string prompt(const std::string &text, const std::string &extra = "") {
  return event("UserPromptSubmitted", "user", R"({"text":")" + text + "\"}", extra);
}
// An assistant message making one call `id` to `name` with args {"n":id}.
inline std::string call(const std::string &id, const std::string &extra = "",
                        const std::string &name = "bash") {
  return event("AssistantMessageCreated", "assistant",
               R"({"content":[{"type":"text","text":"running it"},{"type":"tool_call","id":")" +
                   id + R"(","name":")" + name + R"(","args":{"n":")" + id + R"("}}]})",
               extra);
}
inline std::string finished(const std::string &id, const std::string &extra = "") {
  return event("ToolCallFinished", "tool",
               R"({"tool_call_id":")" + id + R"(","output":"ok )" + id + R"(","duration_ms":12})",
               extra);
}
inline std::string failed(const std::string &id, const std::string &extra = "") {
  return event("ToolCallFailed", "tool", R"({"tool_call_id":")" + id + R"(","error":"timed out"})",
               extra);
}

// The id of a stored event (what append returns).
inline std::string id_of(const std::string &stored) { return field(stored, "id"); }

// The elements of a JSON array, each as compact JSON.
inline std::vector<std::string> items(const std::string &json_array) {
  simdjson::dom::parser p;
  std::vector<std::string> out;
  for (simdjson::dom::element e : p.parse(json_array).get_array())
    out.push_back(simdjson::minify(e));
  return out;
}

// One field of every element of a JSON array.
inline std::vector<std::string> column(const std::string &json_array, const char *key) {
  std::vector<std::string> out;
  for (const std::string &item : items(json_array)) out.push_back(field(item, key));
  return out;
}

// A database with one session "s", and reads of a branch's views (main
// when branch is nullptr).
struct SessionFixture {
  TempDir dir;
  Engine db{dir.file("s.ctxdb"), ""};
  SessionFixture() { db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})"); }
  // Appends to "s"; the new event's id.
  std::string add(const std::string &line) { return id_of(db.append("s", line)); }
  static std::optional<std::string_view> branch_of(const char *branch) {
    if (!branch) return std::nullopt;
    return std::string_view(branch);
  }
  std::string messages(const char *branch = nullptr) { return db.messages("s", branch_of(branch)); }
  std::string calls(const char *branch = nullptr) { return db.tool_calls("s", branch_of(branch)); }
};

} // namespace ctxdb::test
