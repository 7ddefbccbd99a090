// The JSON form of AgentState (schema/json/state.schema.json): to_json and
// its exact inverse, from_json, which snapshots and the state table use.
#include "project/agent_state.hpp"

#include "error.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb::project {

namespace {

using json::JsonWriter;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// ---- writing ----------------------------------------------------------------

void opt_field(JsonWriter &w, std::string_view key, const std::optional<std::string> &v) {
  w.key(key);
  v ? w.value(*v) : w.null();
}

void strings_field(JsonWriter &w, std::string_view key, const std::vector<std::string> &v) {
  w.key(key).begin_array();
  for (const auto &s : v) w.value(s);
  w.end_array();
}

void write_sourced(JsonWriter &w, const Sourced &s) {
  w.begin_object().field("text", s.text).field("event_id", s.event_id).end_object();
}

void sourced_field(JsonWriter &w, std::string_view key, const std::optional<Sourced> &s) {
  w.key(key);
  s ? write_sourced(w, *s) : void(w.null());
}

void sourced_list(JsonWriter &w, std::string_view key, const std::vector<Sourced> &list) {
  w.key(key).begin_array();
  for (const Sourced &s : list) write_sourced(w, s);
  w.end_array();
}

// A plan's status follows from its steps, so it cannot disagree with them.
const char *plan_status(const Plan &p) {
  if (p.steps.empty()) return "none";
  bool open = false;
  for (const PlanStep &s : p.steps) {
    if (s.status == "blocked") return "blocked";
    open |= s.status != "done" && s.status != "skipped";
  }
  return open ? "active" : "done";
}

void write_plan(JsonWriter &w, const Plan &p) {
  w.key("plan").begin_object().key("steps").begin_array();
  for (const PlanStep &s : p.steps)
    w.begin_object().field("text", s.text).field("status", s.status).end_object();
  w.end_array().key("current_step");
  p.current_step ? w.value(*p.current_step) : w.null();
  w.field("status", plan_status(p));
  opt_field(w, "event_id", p.event_id.empty() ? std::nullopt : std::optional(p.event_id));
  w.end_object();
}

void write_questions(JsonWriter &w, std::string_view key, const std::vector<Question> &list,
                     bool resolved) {
  w.key(key).begin_array();
  for (const Question &q : list) {
    w.begin_object().field("id", q.id).field("text", q.text).field("event_id", q.event_id);
    if (resolved) {
      opt_field(w, "answer", q.answer);
      w.field("resolved_event_id", q.resolved_event_id);
    }
    w.end_object();
  }
  w.end_array();
}

void write_files(JsonWriter &w, std::string_view key, const std::map<std::string, FileEntry> &m) {
  w.key(key).begin_array();
  for (const auto &[path, f] : m) {
    w.begin_object().field("path", path).field("event_id", f.event_id).field("count", f.count);
    opt_field(w, "change_summary", f.change_summary);
    opt_field(w, "artifact_id", f.artifact_id);
    w.end_object();
  }
  w.end_array();
}

void write_results(JsonWriter &w, std::string_view key, const std::deque<CallResult> &list) {
  w.key(key).begin_array();
  for (const CallResult &r : list) {
    w.begin_object().field("id", r.id).field("name", r.name).field("event_id", r.event_id);
    w.key("is_error").boolean(r.is_error).key("exit_code");
    r.exit_code ? w.value(*r.exit_code) : w.null();
    opt_field(w, "artifact_id", r.artifact_id);
    opt_field(w, "error", r.error);
    w.key("retryable").boolean(r.retryable).end_object();
  }
  w.end_array();
}

void write_tool_state(JsonWriter &w, const ToolState &t) {
  w.key("tool_state").begin_object().key("pending").begin_array();
  for (const PendingCall &c : t.pending) {
    w.begin_object()
        .field("id", c.id)
        .field("name", c.name)
        .field("event_id", c.event_id)
        .field("status", c.status);
    opt_field(w, "approval", c.approval);
    w.end_object();
  }
  w.end_array();
  write_results(w, "last_results", t.last_results);
  write_results(w, "failed", t.failed);
  w.end_object();
}

void write_decisions(JsonWriter &w, const std::vector<Decision> &list) {
  w.key("decisions").begin_array();
  for (const Decision &d : list) {
    w.begin_object().field("decision", d.decision);
    opt_field(w, "rationale", d.rationale);
    w.key("alternatives");
    d.alternatives ? w.raw(*d.alternatives) : w.null();
    strings_field(w, "evidence_refs", d.evidence_refs);
    w.field("event_id", d.event_id).end_object();
  }
  w.end_array();
}

// ---- reading ----------------------------------------------------------------

[[noreturn]] void corrupt(const std::string &why) { throw Error(Code::kCorrupt, why); }

object obj(element e, const char *what) {
  object o;
  if (e.get(o)) corrupt(std::string(what) + " is not an object");
  return o;
}

element at(object o, const char *key) {
  element v;
  if (o[key].get(v)) corrupt(std::string("missing '") + key + "'");
  return v;
}

std::string str(object o, const char *key) {
  std::string_view s;
  if (at(o, key).get(s)) corrupt(std::string("'") + key + "' is not a string");
  return std::string(s);
}

std::optional<std::string> opt_str(object o, const char *key) {
  element v = at(o, key);
  if (v.is_null()) return std::nullopt;
  std::string_view s;
  if (v.get(s)) corrupt(std::string("'") + key + "' is not a string");
  return std::string(s);
}

std::optional<int64_t> opt_int(object o, const char *key) {
  element v = at(o, key);
  if (v.is_null()) return std::nullopt;
  int64_t n = 0;
  if (v.get(n)) corrupt(std::string("'") + key + "' is not an integer");
  return n;
}

bool boolean(object o, const char *key) {
  bool b = false;
  if (at(o, key).get(b)) corrupt(std::string("'") + key + "' is not a boolean");
  return b;
}

template <class Fn> void each(object o, const char *key, Fn &&fn) {
  array a;
  if (at(o, key).get(a)) corrupt(std::string("'") + key + "' is not an array");
  for (element item : a) fn(item);
}

std::vector<std::string> strings(object o, const char *key) {
  std::vector<std::string> out;
  each(o, key, [&](element e) {
    std::string_view s;
    if (e.get(s)) corrupt(std::string("'") + key + "' holds a non-string");
    out.emplace_back(s);
  });
  return out;
}

Sourced read_sourced(element e) {
  object o = obj(e, "a sourced text");
  return {str(o, "text"), str(o, "event_id")};
}

std::optional<Sourced> opt_sourced(object o, const char *key) {
  element v = at(o, key);
  if (v.is_null()) return std::nullopt;
  return read_sourced(v);
}

std::vector<Sourced> sourced_list(object o, const char *key) {
  std::vector<Sourced> out;
  each(o, key, [&](element e) { out.push_back(read_sourced(e)); });
  return out;
}

Question read_question(element e, bool resolved) {
  object o = obj(e, "a question");
  Question q{str(o, "id"), str(o, "text"), str(o, "event_id"), std::nullopt, {}};
  if (resolved) {
    q.answer = opt_str(o, "answer");
    q.resolved_event_id = str(o, "resolved_event_id");
  }
  return q;
}

std::map<std::string, FileEntry> read_files(object o, const char *key) {
  std::map<std::string, FileEntry> out;
  each(o, key, [&](element e) {
    object f = obj(e, "a file");
    out[str(f, "path")] = {str(f, "event_id"), opt_int(f, "count").value_or(0),
                           opt_str(f, "change_summary"), opt_str(f, "artifact_id")};
  });
  return out;
}

std::deque<CallResult> read_results(object o, const char *key) {
  std::deque<CallResult> out;
  each(o, key, [&](element e) {
    object r = obj(e, "a tool result");
    out.push_back({str(r, "id"), str(r, "name"), str(r, "event_id"), boolean(r, "is_error"),
                   opt_int(r, "exit_code"), opt_str(r, "artifact_id"), opt_str(r, "error"),
                   boolean(r, "retryable")});
  });
  return out;
}

Plan read_plan(object o) {
  Plan p;
  each(o, "steps", [&](element e) {
    object s = obj(e, "a plan step");
    p.steps.push_back({str(s, "text"), str(s, "status")});
  });
  p.current_step = opt_int(o, "current_step");
  p.event_id = opt_str(o, "event_id").value_or("");
  return p;
}

ToolState read_tool_state(object o) {
  ToolState t;
  each(o, "pending", [&](element e) {
    object c = obj(e, "a pending call");
    t.pending.push_back({str(c, "id"), str(c, "name"), str(c, "event_id"), str(c, "status"),
                         opt_str(c, "approval")});
  });
  t.last_results = read_results(o, "last_results");
  t.failed = read_results(o, "failed");
  return t;
}

std::vector<Decision> read_decisions(object o) {
  std::vector<Decision> out;
  each(o, "decisions", [&](element e) {
    object d = obj(e, "a decision");
    Decision x;
    x.decision = str(d, "decision");
    x.rationale = opt_str(d, "rationale");
    element alt = at(d, "alternatives");
    if (!alt.is_null()) x.alternatives = json::canonical(alt);
    x.evidence_refs = strings(d, "evidence_refs");
    x.event_id = str(d, "event_id");
    out.push_back(std::move(x));
  });
  return out;
}

} // namespace

std::string to_json(const AgentState &s) {
  JsonWriter w;
  w.begin_object().key("goal").begin_object();
  sourced_field(w, "user_goal", s.goal.user_goal);
  sourced_field(w, "request", s.goal.request);
  sourced_field(w, "current_task", s.goal.current_task);
  sourced_list(w, "acceptance_criteria", s.goal.acceptance_criteria);
  w.end_object();
  write_plan(w, s.plan);
  w.key("constraints").begin_object();
  sourced_list(w, "hard", s.constraints.hard);
  sourced_list(w, "soft", s.constraints.soft);
  sourced_list(w, "preferences", s.constraints.preferences);
  w.end_object().key("facts").begin_array();
  for (const Fact &f : s.facts) {
    w.begin_object().field("content", f.content).raw_field("confidence", f.confidence);
    strings_field(w, "source_refs", f.source_refs);
    w.field("event_id", f.event_id).end_object();
  }
  w.end_array();
  write_decisions(w, s.decisions);
  write_questions(w, "open_questions", s.open_questions, false);
  write_questions(w, "resolved_questions", s.resolved_questions, true);
  w.key("files").begin_object();
  write_files(w, "read", s.files_read);
  write_files(w, "modified", s.files_modified);
  w.end_object();
  write_tool_state(w, s.tool_state);
  opt_field(w, "last_compaction_id", s.last_compaction_id);
  w.end_object();
  return w.take();
}

namespace {

AgentState read_state(std::string_view text) {
  simdjson::dom::parser parser;
  element doc;
  if (parser.parse(text.data(), text.size()).get(doc)) corrupt("not JSON");
  object root = obj(doc, "the state");
  AgentState s;
  object goal = obj(at(root, "goal"), "goal");
  s.goal = {opt_sourced(goal, "user_goal"), opt_sourced(goal, "request"),
            opt_sourced(goal, "current_task"), sourced_list(goal, "acceptance_criteria")};
  s.plan = read_plan(obj(at(root, "plan"), "plan"));
  object c = obj(at(root, "constraints"), "constraints");
  s.constraints = {sourced_list(c, "hard"), sourced_list(c, "soft"),
                   sourced_list(c, "preferences")};
  each(root, "facts", [&](element e) {
    object f = obj(e, "a fact");
    s.facts.push_back({str(f, "content"), json::canonical(at(f, "confidence")),
                       strings(f, "source_refs"), str(f, "event_id")});
  });
  s.decisions = read_decisions(root);
  each(root, "open_questions",
       [&](element e) { s.open_questions.push_back(read_question(e, false)); });
  each(root, "resolved_questions",
       [&](element e) { s.resolved_questions.push_back(read_question(e, true)); });
  object files = obj(at(root, "files"), "files");
  s.files_read = read_files(files, "read");
  s.files_modified = read_files(files, "modified");
  s.tool_state = read_tool_state(obj(at(root, "tool_state"), "tool_state"));
  s.last_compaction_id = opt_str(root, "last_compaction_id");
  return s;
}

} // namespace

AgentState from_json(std::string_view text, std::string_view what) {
  try {
    return read_state(text);
  } catch (const Error &e) {
    throw Error(e.code(), std::string(what) + " is not a stored agent state: " + e.what());
  }
}

} // namespace ctxdb::project
