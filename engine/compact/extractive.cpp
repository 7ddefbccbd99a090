#include "compact/extractive.hpp"

#include "project/payload_cache.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <unordered_map>

namespace ctxdb::compact {

namespace {

using project::string_field;
using simdjson::dom::element;

// Bounds on what accumulates over chained compactions: a summary is read
// by every later compile, so lists that only grow are kept to their
// newest entries. Files, decisions and facts are sets and are not cut.
constexpr size_t kMaxDone = 32;
constexpr size_t kMaxToolResults = 16;
constexpr size_t kMaxInheritedErrors = 32;
constexpr size_t kMaxRisks = 8;
constexpr size_t kMaxSourceIds = 64;
constexpr size_t kItemChars = 240;

std::string clip(std::string_view s, size_t max = kItemChars) { return shorten(s, max); }

// Items by key in first-seen order; a later put of the same key replaces
// the item (the newer wins).
class Keyed {
public:
  void put(const std::string &key, std::string json) {
    auto [it, fresh] = index_.try_emplace(key, items_.size());
    if (fresh)
      items_.push_back(std::move(json));
    else
      items_[it->second] = std::move(json);
  }
  void keep_last(size_t n) {
    if (items_.size() > n) items_.erase(items_.begin(), items_.end() - ptrdiff_t(n));
  }
  void write(json::JsonWriter &w, const char *key) const {
    w.key(key).begin_array();
    for (const std::string &item : items_) w.raw(item);
    w.end_array();
  }

private:
  std::unordered_map<std::string, size_t> index_;
  std::vector<std::string> items_;
};

std::string json_string(std::string_view s) {
  std::string out;
  json::append_quoted(out, s);
  return out;
}

struct Sections {
  Keyed done, decisions, facts, files_read, files_modified, tool_results, errors;
  std::vector<std::string> source_ids;
  void source(const std::string &id) {
    if (id.empty() || source_ids.size() >= kMaxSourceIds) return;
    for (const std::string &s : source_ids)
      if (s == id) return;
    source_ids.push_back(id);
  }
};

void inherit(Sections &s, element prev) {
  std::string_view plain;
  if (!prev.get(plain)) {
    s.done.put("previous", json_string("Earlier work (summarized before): " + clip(plain, 2000)));
    return;
  }
  for (element d : items_of(prev["progress"]["done"]))
    if (d.is_string()) s.done.put(std::string(d.get_string().value()), json::canonical(d));
  for (element d : items_of(prev["decisions"]))
    s.decisions.put(std::string(string_field(d, "decision")), json::canonical(d));
  for (element f : items_of(prev["facts"]))
    s.facts.put(std::string(string_field(f, "content")), json::canonical(f));
  for (element f : items_of(prev["files"]["read"]))
    s.files_read.put(std::string(string_field(f, "path")), json::canonical(f));
  for (element f : items_of(prev["files"]["modified"]))
    s.files_modified.put(std::string(string_field(f, "path")), json::canonical(f));
  for (element r : items_of(prev["tool_results"]))
    s.tool_results.put(std::string(string_field(r, "tool_call_id")) + "|" +
                           std::string(string_field(r, "summary")),
                       json::canonical(r));
  for (element e : items_of(prev["errors"]))
    s.errors.put(std::string(string_field(e, "tool_call_id")) + "|" +
                     std::string(string_field(e, "event_id")),
                 json::canonical(e));
  s.errors.keep_last(kMaxInheritedErrors);
}

std::string file_item(const FileTouch &f) {
  json::JsonWriter w;
  w.begin_object().field("path", f.path);
  if (f.change_summary) w.field("change_summary", *f.change_summary);
  w.field("event_id", f.event_id).end_object();
  return w.take();
}

void strings(json::JsonWriter &w, const char *key, const std::vector<std::string> &list) {
  w.key(key).begin_array();
  for (const std::string &s : list) w.value(s);
  w.end_array();
}

} // namespace

std::string extractive_summary(const Plan &p) {
  const project::AgentState &st = p.target.state;
  Sections s;
  if (!p.previous_summary.empty()) {
    simdjson::dom::parser parser;
    inherit(s, json::parse(parser, p.previous_summary, "previous summary"));
    s.source(p.previous_compaction_id);
  }
  s.source(p.from_event_id);
  s.source(p.to_event_id);

  // Work done: the plan's finished steps, and the requests the range handled.
  std::vector<std::string> in_progress, blocked, next_steps;
  for (const project::PlanStep &step : st.plan.steps) {
    if (step.status == "done" || step.status == "skipped")
      s.done.put(step.text,
                 json_string(step.text + (step.status == "skipped" ? " (skipped)" : "")));
    else if (step.status == "in_progress")
      in_progress.push_back(step.text);
    else if (step.status == "blocked")
      blocked.push_back(step.text);
    if (step.status == "pending" || step.status == "in_progress") next_steps.push_back(step.text);
  }
  const std::optional<project::Sourced> &request = st.goal.request;
  for (const project::Sourced &prompt : p.prompts) {
    if (request && prompt.event_id == request->event_id) continue; // still current
    std::string text = "Handled the request: " + clip(prompt.text);
    s.done.put(text, json_string(text));
  }
  s.done.keep_last(kMaxDone);

  for (const project::Decision &d : st.decisions) {
    json::JsonWriter w;
    w.begin_object().field("decision", d.decision);
    if (d.rationale) w.field("rationale", *d.rationale);
    if (!d.evidence_refs.empty()) strings(w, "evidence_refs", d.evidence_refs);
    w.field("event_id", d.event_id).end_object();
    s.decisions.put(d.decision, w.take());
    if (p.range_ids.count(d.event_id)) s.source(d.event_id);
  }
  for (const project::Fact &f : st.facts) {
    json::JsonWriter w;
    w.begin_object().field("content", f.content).raw_field("confidence", f.confidence);
    std::vector<std::string> refs = f.source_refs;
    refs.push_back(f.event_id);
    strings(w, "source_refs", refs);
    w.end_object();
    s.facts.put(f.content, w.take());
  }
  for (const FileTouch &f : p.files_read) {
    s.files_read.put(f.path, "{\"path\":" + json_string(f.path) +
                                 ",\"event_id\":" + json_string(f.event_id) + "}");
    s.source(f.event_id);
  }
  for (const FileTouch &f : p.files_modified) {
    s.files_modified.put(f.path, file_item(f));
    s.source(f.event_id);
  }
  for (const ToolResult &r : p.tool_results) {
    json::JsonWriter w;
    w.begin_object().field("tool_call_id", r.call_id);
    if (!r.name.empty()) w.field("name", r.name);
    w.field("summary", clip(r.preview))
        .field("artifact_id", r.artifact_id)
        .field("event_id", r.event_id)
        .end_object();
    s.tool_results.put(r.call_id + "|" + r.preview, w.take());
  }
  s.tool_results.keep_last(kMaxToolResults);
  std::vector<std::string> risks;
  for (const ToolError &e : p.tool_errors) {
    json::JsonWriter w;
    w.begin_object().field("tool_call_id", e.call_id);
    if (!e.name.empty()) w.field("name", e.name);
    w.field("error", clip(e.error)).field("event_id", e.event_id).end_object();
    s.errors.put(e.call_id + "|" + e.event_id, w.take());
    s.source(e.event_id);
    risks.push_back((e.name.empty() ? "a tool" : e.name) + " failed: " + clip(e.error, 120));
  }
  if (risks.size() > kMaxRisks) risks.erase(risks.begin(), risks.end() - ptrdiff_t(kMaxRisks));
  for (const project::PendingCall &c : st.tool_state.pending) {
    // Only a call the host is still running is awaited: one the
    // conversation moved on from is closed (compile::History).
    if (std::find(p.pending_kept.begin(), p.pending_kept.end(), c.id) == p.pending_kept.end())
      continue;
    next_steps.push_back("Await the result of " + (c.name.empty() ? "tool call" : c.name) + " (" +
                         c.id + ")");
    if (c.approval == "requested") risks.push_back("Call " + c.id + " is waiting for approval");
  }

  std::optional<project::Sourced> task = st.goal.current_task ? st.goal.current_task : request;
  if (next_steps.empty())
    next_steps.push_back(task ? "Continue with: " + clip(task->text)
                              : "Wait for the user's next request");

  json::JsonWriter w;
  w.begin_object().key("goal").begin_object();
  if (st.goal.user_goal) w.field("user_goal", st.goal.user_goal->text);
  if (task) w.field("current_task", task->text);
  w.key("acceptance_criteria").begin_array();
  for (const project::Sourced &c : st.goal.acceptance_criteria) w.value(c.text);
  w.end_array().end_object();
  w.key("constraints").begin_object();
  for (auto [key, list] : {std::pair{"hard", &st.constraints.hard},
                           {"soft", &st.constraints.soft},
                           {"preferences", &st.constraints.preferences}}) {
    w.key(key).begin_array();
    for (const project::Sourced &c : *list) w.value(c.text);
    w.end_array();
  }
  w.end_object().key("progress").begin_object();
  s.done.write(w, "done");
  strings(w, "in_progress", in_progress);
  strings(w, "blocked", blocked);
  w.end_object();
  if (p.split_request) {
    w.key("split_turn")
        .begin_object()
        .field("request", p.split_request->text)
        .field("event_id", p.split_request->event_id)
        .end_object();
    s.source(p.split_request->event_id);
  }
  s.decisions.write(w, "decisions");
  s.facts.write(w, "facts");
  w.key("files").begin_object();
  s.files_read.write(w, "read");
  s.files_modified.write(w, "modified");
  w.end_object();
  s.tool_results.write(w, "tool_results");
  s.errors.write(w, "errors");
  w.key("open_questions").begin_array();
  for (const project::Question &q : st.open_questions) w.value(q.text);
  w.end_array();
  strings(w, "next_steps", next_steps);
  strings(w, "risks", risks);
  w.key("provenance").begin_object();
  strings(w, "source_event_ids", s.source_ids);
  w.key("summarizer")
      .begin_object()
      .field("name", kExtractive.name)
      .field("version", kExtractive.version)
      .end_object()
      .end_object();
  w.end_object();
  return w.take();
}

} // namespace ctxdb::compact
