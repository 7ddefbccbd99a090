// The AgentState fold (project/agent_state.hpp): what each event type and
// StateUpdated op does to the state, which ops are rejected and why, and
// that the JSON form round-trips.
#include "project/agent_state.hpp"
#include "store/store.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>

#include <string>

namespace agent_state_test {

using namespace ctxdb;
using project::AgentState;

namespace {

int next_id = 0;

log::Event event(const std::string &type, const std::string &payload) {
  log::Event e;
  e.id = "evt_" + std::to_string(++next_id);
  e.type = type;
  e.payload = payload;
  return e;
}

// Applies and returns the event's id.
std::string fold(AgentState &s, const std::string &type, const std::string &payload) {
  log::Event e = event(type, payload);
  project::apply(s, e);
  return e.id;
}

std::string ops(const std::string &list) { return R"({"ops":[)" + list + "]}"; }

std::string rejection(AgentState &s, const std::string &payload) {
  try {
    fold(s, "StateUpdated", payload);
  } catch (const Error &e) {
    CHECK(e.code() == Code::kInvalidArg);
    return e.what();
  }
  FAIL("the op was accepted: " << payload);
  return "";
}

void round_trips(const AgentState &s) {
  std::string json = project::to_json(s);
  AgentState back = project::from_json(json, "the round trip");
  CHECK(back == s);
  CHECK(project::to_json(back) == json);
  // The document the engine returns wraps the state.
  simdjson::dom::parser p;
  std::string wrapped =
      R"({"session_id":"s","branch_id":"b","seq":1,"event_id":"e","state":)" + json + "}";
  CHECK_NOTHROW(store::embedded_schema("json/state.schema.json")
                    .validate(json::parse(p, wrapped, "state"), ""));
}

} // namespace

TEST_CASE("a user prompt sets the request, the goal once, and acceptance criteria") {
  AgentState s;
  std::string first = fold(s, "UserPromptSubmitted",
                           R"({"text":"fix the test","acceptance_criteria":["ctest passes"]})");
  std::string second =
      fold(s, "UserPromptSubmitted",
           R"({"text":"also lint","acceptance_criteria":["ctest passes","lint"]})");
  CHECK(s.goal.user_goal == project::Sourced{"fix the test", first});
  CHECK(s.goal.request == project::Sourced{"also lint", second});
  REQUIRE(s.goal.acceptance_criteria.size() == 2);
  CHECK(s.goal.acceptance_criteria[0] == project::Sourced{"ctest passes", first});
  CHECK(s.goal.acceptance_criteria[1] == project::Sourced{"lint", second});
  std::string set = fold(s, "StateUpdated", ops(R"({"op":"set_goal","text":"green CI"},
      {"op":"set_task","text":"read the log"},{"op":"add_acceptance_criterion","text":"no flakes"})"));
  CHECK(s.goal.user_goal == project::Sourced{"green CI", set});
  CHECK(s.goal.current_task == project::Sourced{"read the log", set});
  CHECK(s.goal.acceptance_criteria.size() == 3);
  round_trips(s);
}

TEST_CASE("plans: set_plan, set_step and the derived status") {
  AgentState s;
  std::string id = fold(s, "StateUpdated", ops(R"({"op":"set_plan","steps":["a","b","c"]})"));
  CHECK(s.plan.event_id == id);
  CHECK(s.plan.current_step == 0);
  CHECK(s.plan.steps[0].status == "in_progress");
  CHECK(s.plan.steps[1].status == "pending");
  CHECK(project::to_json(s).find(R"("status":"active")") != std::string::npos);
  fold(s, "StateUpdated", ops(R"({"op":"set_step","step":0,"status":"done"})"));
  CHECK(s.plan.current_step == 1);
  fold(s, "StateUpdated", ops(R"({"op":"set_step","step":2,"status":"blocked"})"));
  CHECK(s.plan.current_step == 2);
  CHECK(project::to_json(s).find(R"("status":"blocked")") != std::string::npos);
  fold(s, "StateUpdated", ops(R"({"op":"set_step","step":1,"status":"skipped"},
      {"op":"set_step","step":2,"status":"done"})"));
  CHECK(!s.plan.current_step);
  CHECK(project::to_json(s).find(R"("status":"done")") != std::string::npos);
  round_trips(s);
  fold(s, "StateUpdated", ops(R"({"op":"set_plan","steps":["x","y"],"current_step":1})"));
  CHECK(s.plan.steps[0].status == "done");
  CHECK(s.plan.steps[1].status == "in_progress");
  fold(s, "StateUpdated", ops(R"({"op":"set_plan","steps":[]})"));
  CHECK(s.plan.steps.empty());
  CHECK(project::to_json(s).find(R"("status":"none")") != std::string::npos);
}

TEST_CASE("constraints, facts with source refs, questions and decisions") {
  AgentState s;
  std::string id = fold(s, "StateUpdated", ops(R"({"op":"add_constraint","text":"no network"},
      {"op":"add_constraint","text":"small diffs","kind":"soft"},
      {"op":"add_constraint","text":"tabs","kind":"preference"},
      {"op":"add_constraint","text":"no network"},
      {"op":"add_fact","content":"the test is flaky","confidence":0.75,"source_refs":["evt_x"]},
      {"op":"add_fact","content":"CI uses gcc 12"},
      {"op":"open_question","text":"which branch?","id":"q1"},
      {"op":"open_question","text":"who owns it?"})"));
  CHECK(s.constraints.hard.size() == 1);
  CHECK(s.constraints.soft[0].text == "small diffs");
  CHECK(s.constraints.preferences[0].event_id == id);
  REQUIRE(s.facts.size() == 2);
  CHECK(s.facts[0].confidence == "0.75");
  CHECK(s.facts[0].source_refs == std::vector<std::string>{"evt_x"});
  CHECK(s.facts[0].event_id == id);
  CHECK(s.facts[1].confidence == "1");
  REQUIRE(s.open_questions.size() == 2);
  CHECK(s.open_questions[1].id == id + "/7"); // the default id names event and op
  std::string resolved =
      fold(s, "StateUpdated", ops(R"({"op":"resolve_question","id":"q1","answer":"main"})"));
  REQUIRE(s.open_questions.size() == 1);
  REQUIRE(s.resolved_questions.size() == 1);
  CHECK(s.resolved_questions[0].answer == "main");
  CHECK(s.resolved_questions[0].resolved_event_id == resolved);
  std::string d =
      fold(s, "DecisionRecorded",
           R"({"decision":"pin gcc","rationale":"repro","alternatives":["clang",{"x":1}],
                           "evidence_refs":["evt_a"]})");
  REQUIRE(s.decisions.size() == 1);
  CHECK(s.decisions[0].alternatives == R"(["clang",{"x":1}])");
  CHECK(s.decisions[0].event_id == d);
  round_trips(s);
}

TEST_CASE("a fact stated again is re-confirmed, not repeated") {
  AgentState s;
  std::string first = fold(s, "StateUpdated", ops(R"({"op":"add_fact","content":"flaky",
      "confidence":0.5,"source_refs":["evt_log"]})"));
  std::string again = fold(s, "StateUpdated", ops(R"({"op":"add_fact","content":"flaky",
      "confidence":0.9,"source_refs":["evt_log","evt_ci"]})"));
  REQUIRE(s.facts.size() == 1);
  CHECK(s.facts[0].confidence == "0.9");
  CHECK(s.facts[0].event_id == again);
  CHECK(s.facts[0].source_refs == std::vector<std::string>{"evt_log", first, "evt_ci"});
  // The sources it keeps are bounded, newest last.
  std::string last;
  for (int i = 0; i < 20; ++i)
    last = fold(s, "StateUpdated", ops(R"({"op":"add_fact","content":"flaky"})"));
  REQUIRE(s.facts.size() == 1);
  CHECK(s.facts[0].source_refs.size() == 8);
  CHECK(s.facts[0].event_id == last);
  CHECK(s.facts[0].source_refs.back() != last); // its own event is event_id, not a source
  round_trips(s);
}

TEST_CASE("files read and modified, by path") {
  AgentState s;
  fold(s, "FileRead", R"({"path":"b.c"})");
  std::string w1 =
      fold(s, "FileWritten", R"({"path":"a.c","change_summary":"fix","artifact_id":"art_1"})");
  std::string w2 = fold(s, "DiffApplied", R"({"path":"a.c"})");
  fold(s, "DiffApplied", R"({"path":"c.c","change_summary":"new"})");
  CHECK(s.files_read.count("b.c") == 1);
  CHECK(s.files_read.count("a.c") == 0);
  REQUIRE(s.files_modified.size() == 2);
  const project::FileEntry &a = s.files_modified["a.c"];
  CHECK(a.event_id == w2);
  CHECK(a.count == 2);
  CHECK(a.change_summary == "fix"); // the diff had none: the earlier one stays
  CHECK(a.artifact_id == "art_1");
  std::string json = project::to_json(s);
  CHECK(json.find(R"("path":"a.c")") < json.find(R"("path":"c.c")"));
  (void)w1;
  round_trips(s);
}

TEST_CASE("tool state: pending calls, approvals, results and failures") {
  AgentState s;
  std::string call = fold(s, "AssistantMessageCreated", R"({"content":[{"type":"text","text":"hi"},
      {"type":"tool_call","id":"c1","name":"bash","args":{}},
      {"type":"tool_call","id":"c2","name":"grep","args":"x"}]})");
  REQUIRE(s.tool_state.pending.size() == 2);
  CHECK(s.tool_state.pending[0].event_id == call);
  fold(s, "ApprovalRequested", R"({"tool_call_id":"c1"})");
  fold(s, "ApprovalGranted", R"({"tool_call_id":"c1"})");
  fold(s, "ToolCallStarted", R"({"tool_call_id":"c1"})");
  CHECK(s.tool_state.pending[0].approval == "granted");
  CHECK(s.tool_state.pending[0].status == "running");
  fold(s, "ToolCallFailed", R"({"tool_call_id":"c1","error":"timeout","retryable":true})");
  std::string done =
      fold(s, "ToolCallFinished", R"({"tool_call_id":"c2","output":"x","exit_code":0})");
  CHECK(s.tool_state.pending.empty());
  REQUIRE(s.tool_state.failed.size() == 1);
  CHECK(s.tool_state.failed[0].name == "bash");
  CHECK(s.tool_state.failed[0].retryable);
  CHECK(s.tool_state.failed[0].error == "timeout");
  REQUIRE(s.tool_state.last_results.size() == 2);
  CHECK(s.tool_state.last_results[1].event_id == done);
  CHECK(s.tool_state.last_results[1].exit_code == 0);
  CHECK(!s.tool_state.last_results[1].is_error);
  round_trips(s);
  // A retry under the same id that finishes clears the failure.
  fold(s, "ToolCallFinished", R"({"tool_call_id":"c1"})");
  CHECK(s.tool_state.failed.empty());
  for (int i = 0; i < 20; ++i)
    fold(s, "ToolCallFinished", R"({"tool_call_id":"r)" + std::to_string(i) + R"("})");
  CHECK(s.tool_state.last_results.size() == project::kMaxResults);
  CHECK(s.tool_state.last_results.back().id == "r19");
}

TEST_CASE("compactions and other events") {
  AgentState s;
  std::string before = project::to_json(s);
  fold(s, "Note", R"({"anything":1})");
  fold(s, "ErrorRaised", R"({"message":"x"})");
  CHECK(project::to_json(s) == before);
  std::string c = fold(s, "CompactionCompleted", R"({"summary":"s","first_kept_event_id":"e"})");
  CHECK(s.last_compaction_id == c);
  round_trips(s);
}

TEST_CASE("malformed or rule-breaking StateUpdated ops are rejected, naming event, op and rule") {
  AgentState s;
  std::string msg = rejection(s, ops(R"({"op":"set_task"})"));
  CHECK(msg.find("StateUpdated event 'evt_") == 0);
  CHECK(msg.find("ops[0] (set_task): missing required field 'text'") != std::string::npos);
  CHECK(rejection(s, ops(R"({"op":"set_step","step":0})")).find("there is no plan") !=
        std::string::npos);
  fold(s, "StateUpdated", ops(R"({"op":"set_plan","steps":["a"]})"));
  CHECK(rejection(s, ops(R"({"op":"set_task","text":"ok"},{"op":"set_step","step":3})"))
            .find("ops[1] (set_step): step 3 is outside the plan (1 steps)") != std::string::npos);
  CHECK(rejection(s, ops(R"({"op":"resolve_question","id":"nope"})"))
            .find("question 'nope' is not open") != std::string::npos);
  CHECK(rejection(s, ops(R"({"op":"add_fact","content":3})"))
            .find("field 'content' must be a string") != std::string::npos);
  CHECK(rejection(s, ops(R"({"op":"add_fact","content":"x","confidence":2})")).find("confidence") !=
        std::string::npos);
  CHECK(rejection(s, ops(R"({"op":"set_plan","steps":[1]})")).find("steps") != std::string::npos);
  CHECK(rejection(s, ops(R"({"op":"fly"})")).find("unknown op 'fly'") != std::string::npos);
  fold(s, "StateUpdated", ops(R"({"op":"open_question","text":"?","id":"q"})"));
  CHECK(rejection(s, ops(R"({"op":"open_question","text":"again","id":"q"})"))
            .find("question 'q' is already open") != std::string::npos);
}

TEST_CASE("from_json rejects what is not a state, naming it and the fault") {
  auto message = [](const char *text) {
    try {
      project::from_json(text, "the row");
    } catch (const Error &e) {
      CHECK(e.code() == Code::kCorrupt);
      return std::string(e.what());
    }
    return std::string("read");
  };
  CHECK(message("{") == "the row is not a stored agent state: not JSON");
  CHECK(message("[]") == "the row is not a stored agent state: the state is not an object");
  CHECK(message(R"({"goal":{}})").find("the row is not a stored agent state: ") == 0);
}

} // namespace agent_state_test
