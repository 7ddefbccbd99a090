// Every JSON the engine returns matches the schema that documents it in
// schema/json/, so the schemas cannot drift from what hosts receive.
#include "engine.hpp"
#include "store/store.hpp"
#include "test_util.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>

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
  db.append_batch("s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"go"}}
{"type":"StateUpdated","actor":"agent","payload":{"ops":[{"op":"set_plan","steps":["a"]},{"op":"add_fact","content":"f","confidence":0.5},{"op":"open_question","text":"?"}]}}
{"type":"DecisionRecorded","actor":"agent","payload":{"decision":"d","alternatives":["x"]}}
{"type":"AssistantMessageCreated","actor":"model","payload":{"content":[{"type":"tool_call","id":"c1","name":"sh"}],"usage":{"input_tokens":5},"latency_ms":30}}
{"type":"ToolCallFailed","actor":"tool","payload":{"tool_call_id":"c1","error":"x","duration_ms":4}}
{"type":"FileWritten","actor":"tool","payload":{"path":"a.c"}}
{"type":"CompactionCompleted","actor":"agent","payload":{"summary":"s","first_kept_event_id":"e","tokens_before":10,"tokens_after":3}})");
  std::string state = db.state("s", std::nullopt, std::nullopt);
  matches(state, "state.schema.json");
  simdjson::dom::parser p;
  std::string first(p.parse(state)["state"]["goal"]["request"]["event_id"].get_string().value());
  matches(db.state("s", "main", std::nullopt), "state.schema.json");
  matches(db.state("s", std::nullopt, first), "state.schema.json");
  matches(db.stats("s"), "stats.schema.json");
  matches(db.stats(std::nullopt), "stats.schema.json");
  matches(db.rebuild(""), "rebuild_report.schema.json");
  int64_t cursor = 0;
  std::string exported;
  for (const auto &row : db.events_page(std::nullopt, cursor, -1, 100)) exported += row + "\n";
  Engine copy(dir.file("b.ctxdb"), "");
  matches(copy.import(exported), "import_result.schema.json");
}
