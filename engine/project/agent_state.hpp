// agent_state.hpp — the agent's working state (DESIGN §2) as a plain value,
// and the fold that turns a branch's events into it.
//
// The state is a pure function of the events on a branch's path, applied
// in order: apply() uses nothing else (no clock, no database), so a
// projection, a time-travel replay and a rebuild all get the same state,
// and to_json() writes it in one deterministic form
// (schema/json/state.schema.json) that from_json() reads back exactly.
#pragma once

#include "log/event.hpp"

#include <simdjson.h>

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::project {

// A piece of text and the event it came from.
struct Sourced {
  std::string text;
  std::string event_id;
  bool operator==(const Sourced &) const = default;
};

struct Goal {
  std::optional<Sourced> user_goal; // set_goal, else the first user prompt
  std::optional<Sourced> request;   // the latest user prompt
  std::optional<Sourced> current_task;
  std::vector<Sourced> acceptance_criteria;
  bool operator==(const Goal &) const = default;
};

struct PlanStep {
  std::string text;
  std::string status; // pending | in_progress | done | skipped | blocked
  bool operator==(const PlanStep &) const = default;
};

struct Plan {
  std::vector<PlanStep> steps;
  std::optional<int64_t> current_step;
  std::string event_id; // the set_plan that made it ("" when none)
  bool operator==(const Plan &) const = default;
};

struct Constraints {
  std::vector<Sourced> hard, soft, preferences;
  bool operator==(const Constraints &) const = default;
};

struct Fact {
  std::string content;
  std::string confidence = "1"; // the canonical JSON number, so it round-trips exactly
  std::vector<std::string> source_refs;
  std::string event_id;
  bool operator==(const Fact &) const = default;
};

struct Decision {
  std::string decision;
  std::optional<std::string> rationale;
  std::optional<std::string> alternatives; // canonical JSON array
  std::vector<std::string> evidence_refs;
  std::string event_id;
  bool operator==(const Decision &) const = default;
};

struct Question {
  std::string id;
  std::string text;
  std::string event_id;
  std::optional<std::string> answer; // resolved questions only
  std::string resolved_event_id;     // resolved questions only
  bool operator==(const Question &) const = default;
};

struct FileEntry {
  std::string event_id; // the latest event about the file
  int64_t count = 0;    // events about it on this path
  std::optional<std::string> change_summary;
  std::optional<std::string> artifact_id;
  bool operator==(const FileEntry &) const = default;
};

struct PendingCall {
  std::string id;
  std::string name;
  std::string event_id;                // the event that made the call
  std::string status = "requested";    // requested | running
  std::optional<std::string> approval; // requested | granted | denied
  bool operator==(const PendingCall &) const = default;
};

struct CallResult {
  std::string id;
  std::string name;
  std::string event_id;
  bool is_error = false;
  std::optional<int64_t> exit_code;
  std::optional<std::string> artifact_id;
  std::optional<std::string> error; // failed calls
  bool retryable = false;           // failed calls
  bool operator==(const CallResult &) const = default;
};

struct ToolState {
  std::vector<PendingCall> pending; // in call order
  // Deques: the oldest entry leaves as each new one comes.
  std::deque<CallResult> last_results; // the latest kMaxResults, oldest first
  std::deque<CallResult> failed;       // the latest kMaxFailed, oldest first
  bool operator==(const ToolState &) const = default;
};

struct AgentState {
  Goal goal;
  Plan plan;
  Constraints constraints;
  std::vector<Fact> facts;
  std::vector<Decision> decisions;
  std::vector<Question> open_questions;
  std::vector<Question> resolved_questions;
  std::map<std::string, FileEntry> files_read; // by path, so output order is fixed
  std::map<std::string, FileEntry> files_modified;
  ToolState tool_state;
  std::optional<std::string> last_compaction_id;
  bool operator==(const AgentState &) const = default;
};

// Only the latest results and failures stay in the state: it is copied into
// every bundle and every snapshot, so unbounded lists would make both grow
// with the length of the session. The full record is the tool_calls table.
inline constexpr size_t kMaxResults = 8;
inline constexpr size_t kMaxFailed = 16;

// True when events of this type can change the state; others need no parse.
bool affects_state(std::string_view type);

// Folds one event into the state. A StateUpdated op that is malformed or
// breaks a rule of the state (set_step outside the plan, resolving a
// question that is not open, …) throws kInvalidArg naming the event, the
// op and the rule; the state may then be partly changed, so callers drop
// it (the append rolls back).
void apply(AgentState &s, const log::Event &e, simdjson::dom::parser &parser);
void apply(AgentState &s, const log::Event &e); // with a parser of this thread's
// The same with the payload already parsed (it must be e's).
void apply(AgentState &s, const log::Event &e, simdjson::dom::element payload);

// schema/json/state.schema.json, compact, keys in a fixed order.
std::string to_json(const AgentState &s);
// The inverse of to_json; kCorrupt, naming `what` ("the state row of
// branch 3") and the fault, when the text is not a state.
AgentState from_json(std::string_view json, std::string_view what);

} // namespace ctxdb::project
