// Every JSON the engine returns matches the schema that documents it in
// schema/json/, so the schemas cannot drift from what hosts receive.
#include "agent_events.hpp"
#include "engine.hpp"
#include "store/store.hpp"
#include "test_util.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>

namespace output_schema_test {

using namespace ctxdb;

namespace {
void matches(const std::string &json, const char *schema) {
  INFO(schema << ": " << json);
  simdjson::dom::parser p;
  CHECK_NOTHROW(store::embedded_schema(std::string("json/") + schema)
                    .validate(json::parse(p, json, "output"), ""));
}
} // namespace

TEST_CASE("outputs match their schemas") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  std::string session = db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  matches(session, "session.schema.json");
  matches(db.append("s", R"({"type":"Note","actor":"a","payload":{},"run_id":"r"})"),
          "stored_event.schema.json");
  matches(db.append_batch("s", R"({"type":"Note","actor":"a","payload":{}})"),
          "batch_result.schema.json");
  matches(db.append_batch("s", ""), "batch_result.schema.json");
  matches(db.verify(std::nullopt), "verify_report.schema.json");
  matches(db.anchor(""), "anchor.schema.json");
  matches(db.verify_with(R"({"artifacts":"full","anchor":)" + db.anchor("") + "}"),
          "verify_report.schema.json");
  matches(db.rebuild(R"({"check":true})"), "rebuild_report.schema.json");
  db.append_batch(
      "s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"go"},"id":"evt_go"}
{"type":"StateUpdated","actor":"agent","payload":{"ops":[{"op":"set_plan","steps":["a"]},{"op":"add_fact","content":"f","confidence":0.5},{"op":"open_question","text":"?"}]}}
{"type":"DecisionRecorded","actor":"agent","payload":{"decision":"d","alternatives":["x"]}}
{"type":"AssistantMessageCreated","actor":"model","payload":{"content":[{"type":"tool_call","id":"c1","name":"sh"}],"usage":{"input_tokens":5},"latency_ms":30}}
{"type":"ToolCallFailed","actor":"tool","payload":{"tool_call_id":"c1","error":"x","duration_ms":4}}
{"type":"FileWritten","actor":"tool","payload":{"path":"a.c"}}
{"type":"CompactionCompleted","actor":"agent","payload":{"summary":"s","first_kept_event_id":"evt_go","tokens_before":10,"tokens_after":3}})");
  std::string state = db.state("s", std::nullopt, std::nullopt);
  matches(state, "state.schema.json");
  simdjson::dom::parser p;
  std::string first(p.parse(state)["state"]["goal"]["request"]["event_id"].get_string().value());
  matches(db.state("s", "main", std::nullopt), "state.schema.json");
  matches(db.state("s", std::nullopt, first), "state.schema.json");
  matches(db.stats("s"), "stats.schema.json");
  matches(db.stats(std::nullopt), "stats.schema.json");
  matches(db.rebuild(""), "rebuild_report.schema.json");
  matches(db.optimize(""), "optimize_report.schema.json");
  int64_t cursor = 0;
  std::string exported;
  for (const auto &row : db.events_page(std::nullopt, cursor, -1, 100)) exported += row + "\n";
  Engine copy(dir.file("b.ctxdb"), "");
  matches(copy.import(exported), "import_result.schema.json");
}

TEST_CASE("branch views match their schemas") {
  using namespace ctxdb::test;
  TempDir dir;
  Engine db(dir.file("v.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  std::string asked = id_of(db.append("s", prompt("go")));
  db.append("s", event("AssistantMessageCreated", "assistant",
                       R"({"content":[{"type":"thinking","text":"hm"},{"type":"text","text":"ok"},)"
                       R"({"type":"tool_call","id":"c1","name":"read","args":{"p":1}},)"
                       R"({"type":"tool_call","id":"c2"},{"type":"image","url":"u"}]})"));
  db.append("s", event("ToolCallFinished", "tool",
                       R"({"tool_call_id":"c1","output":"x","artifact_id":"a1","duration_ms":3})"));
  db.append("s", failed("c2"));
  db.append("s", call("c3")); // pending
  db.append("s", event("FileRead", "host", R"({"path":"a.py"})"));
  db.append("s", event("DiffApplied", "host", R"({"path":"a.py","change_summary":"fix"})"));
  db.append("s", event("FileWritten", "host", R"({"path":"b.py"})"));
  db.append("s", event("CompactionCompleted", "host",
                       R"({"summary":{"goal":"g"},"first_kept_event_id":")" + asked + "\"}"));
  std::string fork = id_of(db.append("s", prompt("what if", after(asked))));
  for (std::optional<std::string_view> b :
       {std::optional<std::string_view>(), std::optional<std::string_view>(fork)}) {
    matches(db.messages("s", b), "messages.schema.json");
    matches(db.tool_calls("s", b), "tool_calls.schema.json");
    matches(db.files("s", b), "files.schema.json");
  }
}

TEST_CASE("tree outputs match their schemas") {
  test::TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  db.session_create(R"({"id":"s","event_id":"e0","payload":{"agent_id":"a"}})");
  db.append("s", R"({"type":"Note","actor":"a","payload":{},"id":"e1"})");
  std::string fork = db.branch_fork("s", R"({"event_id":"e0","kind":"what_if","name":"w"})");
  matches(fork, "branch.schema.json");
  simdjson::dom::parser p;
  for (simdjson::dom::element b : json::parse(p, db.branch_list("s"), "list").get_array())
    matches(simdjson::minify(b), "branch.schema.json");
  db.session_create(R"({"id":"c","payload":{"agent_id":"a","parent_session_id":"s",
    "spawned_by_event_id":"e0"}})");
  matches(db.session_get("c"), "session.schema.json");
  matches(db.event_children("e0"), "event_children.schema.json");
  int64_t cursor = 0;
  for (const auto &row : db.path_page("s", "w", cursor, 10))
    matches(row, "stored_event.schema.json");
}

TEST_CASE("artifact outputs match their schemas") {
  test::TempDir dir;
  Engine db(dir.file("art.ctxdb"), "");
  std::string put = db.artifact_put("one\ntwo error\nthree\n",
                                    R"({"kind":"command_log","name":"x.log","event_id":"evt_1"})");
  matches(put, "artifact.schema.json");
  matches(db.artifact_put("", ""), "artifact.schema.json");
  simdjson::dom::parser p;
  std::string id(p.parse(put)["id"].get_string().value());
  matches(db.artifact_info(id), "artifact.schema.json");
  simdjson::dom::parser lp;
  std::string list = db.artifact_list(std::nullopt);
  simdjson::dom::array items = lp.parse(list).get_array().value();
  CHECK(items.size() == 2);
  for (simdjson::dom::element a : items) matches(simdjson::to_string(a), "artifact.schema.json");
  matches(db.artifact_preview(id, R"({"mode":"head_tail","lines":2})"),
          "artifact_preview.schema.json");
  matches(db.artifact_preview(id, ""), "artifact_preview.schema.json");
  matches(db.artifact_search(id, "error", R"({"before":1,"after":1})"),
          "artifact_search.schema.json");
  CHECK(db.artifact_read(id, 4, -1) == "two error\nthree\n");
  CHECK(db.artifact_lines(id, 2, 1) == "two error\n");
  CHECK_THROWS_WITH_AS(db.artifact_put("x", R"({"kind":"nope"})"), doctest::Contains("kind"),
                       Error);
}

} // namespace output_schema_test
