#include "project/agent_state.hpp"

#include "error.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>

namespace ctxdb::project {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// ---- reading payload fields -----------------------------------------------

// Schemas have already checked the types of core payloads; these guard the
// fold against anything else and name the field when it is wrong.
std::optional<std::string_view> opt_string(object o, const char *key) {
  element v;
  if (o[key].get(v)) return std::nullopt;
  std::string_view s;
  if (v.get(s)) throw Error(Code::kInvalidArg, std::string("field '") + key + "' must be a string");
  return s;
}

std::optional<int64_t> opt_int(object o, const char *key) {
  element v;
  if (o[key].get(v)) return std::nullopt;
  int64_t n = 0;
  if (v.get(n))
    throw Error(Code::kInvalidArg, std::string("field '") + key + "' must be an integer");
  return n;
}

bool opt_bool(object o, const char *key) {
  bool b = false;
  element v;
  if (!o[key].get(v) && v.get(b))
    throw Error(Code::kInvalidArg, std::string("field '") + key + "' must be a boolean");
  return b;
}

std::vector<std::string> opt_strings(object o, const char *key) {
  std::vector<std::string> out;
  element v;
  if (o[key].get(v)) return out;
  array a;
  if (v.get(a)) throw Error(Code::kInvalidArg, std::string("field '") + key + "' must be an array");
  for (element item : a) {
    std::string_view s;
    if (item.get(s))
      throw Error(Code::kInvalidArg, std::string("field '") + key + "' must hold strings");
    out.emplace_back(s);
  }
  return out;
}

std::optional<std::string> to_opt(std::optional<std::string_view> s) {
  if (!s) return std::nullopt;
  return std::string(*s);
}

void add_unique(std::vector<Sourced> &list, std::string_view text, const std::string &event_id) {
  for (const Sourced &s : list)
    if (s.text == text) return;
  list.push_back({std::string(text), event_id});
}

template <class T> void push_bounded(std::deque<T> &list, T item, size_t max) {
  list.push_back(std::move(item));
  while (list.size() > max) list.pop_front();
}

// ---- StateUpdated ops ------------------------------------------------------

// One op being applied: what a rejection message names.
struct Op {
  const log::Event &e;
  size_t index;
  std::string_view name;
  object o;

  [[noreturn]] void fail(const std::string &rule) const {
    throw Error(Code::kInvalidArg, "StateUpdated event '" + e.id + "': ops[" +
                                       std::to_string(index) + "] (" + std::string(name) +
                                       "): " + rule);
  }
  std::string_view text(const char *key) const {
    std::optional<std::string_view> s;
    try {
      s = opt_string(o, key);
    } catch (const Error &err) {
      fail(err.what());
    }
    if (!s) fail(std::string("missing required field '") + key + "'");
    if (s->empty()) fail(std::string("field '") + key + "' must not be empty");
    return *s;
  }
  template <class F> auto guarded(F &&f) const {
    try {
      return f();
    } catch (const Error &err) {
      fail(err.what());
    }
  }
};

// The step that is current after a change: the first one not finished.
std::optional<int64_t> first_open_step(const Plan &p) {
  for (size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].status != "done" && p.steps[i].status != "skipped") return int64_t(i);
  return std::nullopt;
}

void op_set_plan(AgentState &s, const Op &op) {
  element steps_el;
  array steps;
  if (op.o["steps"].get(steps_el)) op.fail("missing required field 'steps'");
  if (steps_el.get(steps)) op.fail("field 'steps' must be an array of strings");
  Plan plan;
  plan.event_id = op.e.id;
  for (element step : steps) {
    std::string_view t;
    if (step.get(t) || t.empty()) op.fail("field 'steps' must hold non-empty strings");
    plan.steps.push_back({std::string(t), "pending"});
  }
  std::optional<int64_t> current = op.guarded([&] { return opt_int(op.o, "current_step"); });
  if (current && (*current < 0 || *current >= int64_t(plan.steps.size())))
    op.fail("current_step " + std::to_string(*current) + " is outside the plan (" +
            std::to_string(plan.steps.size()) + " steps)");
  if (!plan.steps.empty()) {
    plan.current_step = current.value_or(0);
    for (int64_t i = 0; i < *plan.current_step; ++i) plan.steps[size_t(i)].status = "done";
    plan.steps[size_t(*plan.current_step)].status = "in_progress";
  }
  s.plan = std::move(plan);
}

void op_set_step(AgentState &s, const Op &op) {
  std::optional<int64_t> step = op.guarded([&] { return opt_int(op.o, "step"); });
  if (!step) op.fail("missing required field 'step'");
  if (s.plan.steps.empty()) op.fail("there is no plan on this branch (set_plan first)");
  if (*step < 0 || *step >= int64_t(s.plan.steps.size()))
    op.fail("step " + std::to_string(*step) + " is outside the plan (" +
            std::to_string(s.plan.steps.size()) + " steps)");
  std::string status(
      op.guarded([&] { return opt_string(op.o, "status"); }).value_or("in_progress"));
  static const char *const kStatuses[] = {"pending", "in_progress", "done", "skipped", "blocked"};
  if (std::find(std::begin(kStatuses), std::end(kStatuses), status) == std::end(kStatuses))
    op.fail("status '" + status + "' is not one of pending, in_progress, done, skipped, blocked");
  s.plan.steps[size_t(*step)].status = status;
  if (status == "in_progress" || status == "blocked")
    s.plan.current_step = step;
  else if (status != "pending")
    s.plan.current_step = first_open_step(s.plan);
}

void op_add_constraint(AgentState &s, const Op &op) {
  std::string_view text = op.text("text");
  std::string_view kind = op.guarded([&] { return opt_string(op.o, "kind"); }).value_or("hard");
  std::vector<Sourced> *list = kind == "hard"         ? &s.constraints.hard
                               : kind == "soft"       ? &s.constraints.soft
                               : kind == "preference" ? &s.constraints.preferences
                                                      : nullptr;
  if (!list) op.fail("kind '" + std::string(kind) + "' is not one of hard, soft, preference");
  add_unique(*list, text, op.e.id);
}

// The earlier sources a re-confirmed fact keeps, newest last.
constexpr size_t kMaxFactSources = 8;

void op_add_fact(AgentState &s, const Op &op) {
  Fact f;
  f.content = op.text("content");
  element c;
  if (!op.o["confidence"].get(c)) {
    double d = -1;
    if (c.get(d) || d < 0 || d > 1) op.fail("field 'confidence' must be a number from 0 to 1");
    f.confidence = json::canonical(c);
  }
  f.source_refs = op.guarded([&] { return opt_strings(op.o, "source_refs"); });
  f.event_id = op.e.id;
  // Facts are a set: stating one again re-confirms it (new confidence, the
  // newest event, its sources joined up to a bound) rather than growing the
  // state that every bundle and snapshot carries.
  for (Fact &known : s.facts) {
    if (known.content != f.content) continue;
    known.confidence = std::move(f.confidence);
    if (known.event_id != f.event_id) known.source_refs.push_back(known.event_id);
    for (std::string &ref : f.source_refs)
      if (std::find(known.source_refs.begin(), known.source_refs.end(), ref) ==
          known.source_refs.end())
        known.source_refs.push_back(std::move(ref));
    if (known.source_refs.size() > kMaxFactSources)
      known.source_refs.erase(known.source_refs.begin(),
                              known.source_refs.end() - ptrdiff_t(kMaxFactSources));
    known.event_id = f.event_id;
    return;
  }
  s.facts.push_back(std::move(f));
}

void op_open_question(AgentState &s, const Op &op) {
  Question q;
  q.text = op.text("text");
  std::optional<std::string_view> id = op.guarded([&] { return opt_string(op.o, "id"); });
  q.id = id ? std::string(*id) : op.e.id + "/" + std::to_string(op.index);
  if (q.id.empty()) op.fail("field 'id' must not be empty");
  for (const Question &open : s.open_questions)
    if (open.id == q.id) op.fail("question '" + q.id + "' is already open");
  q.event_id = op.e.id;
  s.open_questions.push_back(std::move(q));
}

void op_resolve_question(AgentState &s, const Op &op) {
  std::string id(op.text("id"));
  auto it = std::find_if(s.open_questions.begin(), s.open_questions.end(),
                         [&](const Question &q) { return q.id == id; });
  if (it == s.open_questions.end())
    op.fail("question '" + id + "' is not open on this branch (open_question first)");
  Question q = std::move(*it);
  s.open_questions.erase(it);
  q.answer = to_opt(op.guarded([&] { return opt_string(op.o, "answer"); }));
  q.resolved_event_id = op.e.id;
  s.resolved_questions.push_back(std::move(q));
}

using OpFn = void (*)(AgentState &, const Op &);

const std::unordered_map<std::string_view, OpFn> &ops() {
  static const std::unordered_map<std::string_view, OpFn> kOps = {
      {"set_goal",
       [](AgentState &s, const Op &op) {
         s.goal.user_goal = Sourced{std::string(op.text("text")), op.e.id};
       }},
      {"set_task",
       [](AgentState &s, const Op &op) {
         s.goal.current_task = Sourced{std::string(op.text("text")), op.e.id};
       }},
      {"add_acceptance_criterion",
       [](AgentState &s, const Op &op) {
         add_unique(s.goal.acceptance_criteria, op.text("text"), op.e.id);
       }},
      {"set_plan", op_set_plan},
      {"set_step", op_set_step},
      {"add_constraint", op_add_constraint},
      {"add_fact", op_add_fact},
      {"open_question", op_open_question},
      {"resolve_question", op_resolve_question},
  };
  return kOps;
}

void apply_state_updated(AgentState &s, const log::Event &e, object payload) {
  array list;
  if (payload["ops"].get(list))
    throw Error(Code::kInvalidArg, "StateUpdated event '" + e.id + "': 'ops' must be an array");
  size_t i = 0;
  for (element item : list) {
    object o;
    if (item.get(o))
      throw Error(Code::kInvalidArg, "StateUpdated event '" + e.id + "': ops[" + std::to_string(i) +
                                         "] must be an object");
    Op op{e, i++, {}, o};
    std::optional<std::string_view> name = op.guarded([&] { return opt_string(o, "op"); });
    if (!name) op.fail("missing required field 'op'");
    op.name = *name;
    auto fn = ops().find(*name);
    if (fn == ops().end()) op.fail("unknown op '" + std::string(*name) + "'");
    fn->second(s, op);
  }
}

// ---- the other events ------------------------------------------------------

void apply_prompt(AgentState &s, const log::Event &e, object p) {
  std::string text(opt_string(p, "text").value_or(""));
  s.goal.request = Sourced{text, e.id};
  if (!s.goal.user_goal) s.goal.user_goal = Sourced{text, e.id};
  for (const std::string &c : opt_strings(p, "acceptance_criteria"))
    add_unique(s.goal.acceptance_criteria, c, e.id);
}

void apply_decision(AgentState &s, const log::Event &e, object p) {
  Decision d;
  d.decision = opt_string(p, "decision").value_or("");
  d.rationale = to_opt(opt_string(p, "rationale"));
  element alt;
  if (!p["alternatives"].get(alt)) d.alternatives = json::canonical(alt);
  d.evidence_refs = opt_strings(p, "evidence_refs");
  d.event_id = e.id;
  s.decisions.push_back(std::move(d));
}

void apply_file(AgentState &s, const log::Event &e, object p) {
  auto &files = e.type == "FileRead" ? s.files_read : s.files_modified;
  FileEntry &f = files[std::string(opt_string(p, "path").value_or(""))];
  f.event_id = e.id;
  ++f.count;
  // The latest event's details win; one that has none keeps the earlier.
  if (auto summary = opt_string(p, "change_summary")) f.change_summary = std::string(*summary);
  if (auto artifact = opt_string(p, "artifact_id")) f.artifact_id = std::string(*artifact);
}

std::vector<PendingCall>::iterator find_pending(AgentState &s, std::string_view id) {
  return std::find_if(s.tool_state.pending.begin(), s.tool_state.pending.end(),
                      [&](const PendingCall &c) { return c.id == id; });
}

void apply_assistant(AgentState &s, const log::Event &e, object p) {
  array content;
  if (p["content"].get(content)) return;
  for (element block : content) {
    object b;
    std::string_view type, id;
    if (block.get(b) || b["type"].get(type) || type != "tool_call" || b["id"].get(id)) continue;
    if (find_pending(s, id) != s.tool_state.pending.end()) continue;
    PendingCall c;
    c.id = id;
    c.name = opt_string(b, "name").value_or("");
    c.event_id = e.id;
    s.tool_state.pending.push_back(std::move(c));
  }
}

void apply_tool_event(AgentState &s, const log::Event &e, object p) {
  std::string_view id = opt_string(p, "tool_call_id").value_or("");
  auto it = find_pending(s, id);
  if (e.type == "ToolCallStarted") {
    if (it == s.tool_state.pending.end()) {
      PendingCall c;
      c.id = id;
      c.name = opt_string(p, "name").value_or("");
      c.event_id = e.id;
      s.tool_state.pending.push_back(std::move(c));
      it = s.tool_state.pending.end() - 1;
    }
    it->status = "running";
    return;
  }
  CallResult r;
  r.id = id;
  r.name =
      it != s.tool_state.pending.end() ? it->name : std::string(opt_string(p, "name").value_or(""));
  r.event_id = e.id;
  r.exit_code = opt_int(p, "exit_code");
  r.artifact_id = to_opt(opt_string(p, "artifact_id"));
  if (it != s.tool_state.pending.end()) s.tool_state.pending.erase(it);
  auto &failed = s.tool_state.failed;
  failed.erase(
      std::remove_if(failed.begin(), failed.end(), [&](const CallResult &f) { return f.id == id; }),
      failed.end());
  if (e.type == "ToolCallFailed") {
    r.is_error = true;
    r.error = to_opt(opt_string(p, "error"));
    r.retryable = opt_bool(p, "retryable");
    push_bounded(failed, r, kMaxFailed);
  } else {
    r.is_error = opt_bool(p, "is_error");
  }
  push_bounded(s.tool_state.last_results, std::move(r), kMaxResults);
}

// A call closed without a result: no longer pending, and neither a result
// nor a failure (it never ran to an end).
void apply_cancel(AgentState &s, const log::Event &, object p) {
  auto it = find_pending(s, opt_string(p, "tool_call_id").value_or(""));
  if (it != s.tool_state.pending.end()) s.tool_state.pending.erase(it);
}

void apply_approval(AgentState &s, const log::Event &e, object p) {
  auto it = find_pending(s, opt_string(p, "tool_call_id").value_or(""));
  if (it == s.tool_state.pending.end()) return;
  it->approval = e.type == "ApprovalRequested" ? "requested"
                 : e.type == "ApprovalGranted" ? "granted"
                                               : "denied";
}

using EventFn = void (*)(AgentState &, const log::Event &, object);

const std::unordered_map<std::string_view, EventFn> &handlers() {
  static const std::unordered_map<std::string_view, EventFn> kHandlers = {
      {"StateUpdated", apply_state_updated},
      {"UserPromptSubmitted", apply_prompt},
      {"DecisionRecorded", apply_decision},
      {"FileRead", apply_file},
      {"FileWritten", apply_file},
      {"DiffApplied", apply_file},
      {"AssistantMessageCreated", apply_assistant},
      {"ToolCallStarted", apply_tool_event},
      {"ToolCallFinished", apply_tool_event},
      {"ToolCallFailed", apply_tool_event},
      {"ToolCallCancelled", apply_cancel},
      {"ApprovalRequested", apply_approval},
      {"ApprovalGranted", apply_approval},
      {"ApprovalDenied", apply_approval},
      {"CompactionCompleted",
       [](AgentState &s, const log::Event &e, object) { s.last_compaction_id = e.id; }},
  };
  return kHandlers;
}

} // namespace

bool affects_state(std::string_view type) { return handlers().count(type) != 0; }

void apply(AgentState &s, const log::Event &e, element payload) {
  auto fn = handlers().find(e.type);
  if (fn == handlers().end()) return;
  object o;
  if (payload.get(o))
    throw Error(Code::kInvalidArg, e.type + " event '" + e.id + "': the payload is not an object");
  fn->second(s, e, o);
}

void apply(AgentState &s, const log::Event &e, simdjson::dom::parser &parser) {
  if (!affects_state(e.type)) return;
  apply(s, e, json::parse_payload(parser, e.payload, e.id));
}

void apply(AgentState &s, const log::Event &e) {
  thread_local simdjson::dom::parser parser;
  apply(s, e, parser);
}

} // namespace ctxdb::project
