#include "compact/summary.hpp"

#include "error.hpp"
#include "project/payload_cache.hpp"
#include "store/store.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <unordered_set>

namespace ctxdb::compact {

namespace {

using project::string_field;
using simdjson::dom::element;

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\n' || c == '\t'; });
}

void collect_refs(element item, std::vector<std::string_view> &refs) {
  if (!item.is_object()) return;
  if (std::string_view id = string_field(item, "event_id"); !id.empty()) refs.push_back(id);
  for (const char *key : {"source_refs", "evidence_refs", "source_event_ids"})
    for (element r : items_of(item[key]))
      if (r.is_string()) refs.push_back(r.get_string().value());
}

Check make(const char *name) { return Check{name, true, "", {}}; }

// A check that fails when something is missing.
Check missing(const char *name, std::vector<std::string> what, const char *detail) {
  Check c{name, what.empty(), "", std::move(what)};
  if (!c.ok) c.detail = detail;
  return c;
}

} // namespace

std::vector<Check> check_summary(const Plan &plan, std::string_view summary_json) {
  std::vector<Check> out;
  simdjson::dom::parser parser;
  element s;
  Check parsed = make("summary_json");
  try {
    s = json::parse(parser, summary_json, "summary");
    if (!s.is_object()) {
      parsed.ok = false;
      parsed.detail = std::string("the summary is ") + json::type_name(s) + ", not an object";
    }
  } catch (const Error &e) {
    parsed.ok = false;
    parsed.detail = e.what();
  }
  out.push_back(parsed);
  if (!parsed.ok) return out;

  Check schema = make("summary_schema");
  try {
    store::embedded_schema("json/compaction_summary.schema.json").validate(s, "summary");
  } catch (const Error &e) {
    schema.ok = false;
    schema.detail = e.what();
  }
  out.push_back(schema);

  Check task = make("current_task");
  std::string_view current;
  if (s["goal"]["current_task"].get(current) || blank(current)) {
    task.ok = false;
    task.detail = "goal.current_task is missing or empty";
  }
  out.push_back(task);

  Check next = make("next_steps");
  std::vector<element> steps = items_of(s["next_steps"]);
  if (std::none_of(steps.begin(), steps.end(), [](element e) {
        std::string_view t;
        return !e.get(t) && !blank(t);
      })) {
    next.ok = false;
    next.detail = "next_steps is missing or empty";
  }
  out.push_back(next);

  std::unordered_set<std::string_view> listed;
  for (element f : items_of(s["files"]["modified"])) listed.insert(string_field(f, "path"));
  std::vector<std::string> paths;
  for (const FileTouch &f : plan.files_modified)
    if (!listed.count(f.path) && std::find(paths.begin(), paths.end(), f.path) == paths.end())
      paths.push_back(f.path);
  out.push_back(missing("files_modified", std::move(paths),
                        "files written in the range but absent from files.modified"));

  std::unordered_set<std::string_view> named;
  for (element e : items_of(s["errors"])) {
    named.insert(string_field(e, "tool_call_id"));
    named.insert(string_field(e, "event_id"));
  }
  std::vector<std::string> calls;
  for (const ToolError &e : plan.tool_errors)
    if (!named.count(e.call_id) && !named.count(e.event_id)) calls.push_back(e.call_id);
  out.push_back(missing("tool_errors", std::move(calls),
                        "tool errors in the range with no errors entry naming their tool_call_id"));
  out.push_back(missing("tool_pair_split", plan.split_pairs,
                        "the cut separates these calls from their results"));
  out.push_back(
      missing("pending_call", plan.pending_in_range, "pending calls would be summarized away"));

  Check refs = make("source_refs");
  std::vector<std::string_view> all;
  element provenance;
  if (!s["provenance"].get(provenance)) collect_refs(provenance, all);
  for (const char *key : {"decisions", "facts", "tool_results", "errors"})
    for (element item : items_of(s[key])) collect_refs(item, all);
  for (element f : items_of(s["files"]["modified"])) collect_refs(f, all);
  for (element f : items_of(s["files"]["read"])) collect_refs(f, all);
  if (std::none_of(all.begin(), all.end(),
                   [&](std::string_view r) { return plan.range_ids.count(std::string(r)) != 0; })) {
    refs.ok = false;
    refs.detail = all.empty() ? "the summary names no source event"
                              : "none of the events the summary names is in the range";
  }
  out.push_back(refs);
  return out;
}

bool all_ok(const std::vector<Check> &checks) {
  return std::all_of(checks.begin(), checks.end(), [](const Check &c) { return c.ok; });
}

std::string failed_names(const std::vector<Check> &checks) {
  std::string out;
  for (const Check &c : checks)
    if (!c.ok) out.append(out.empty() ? "" : ", ").append(c.name);
  return out;
}

void write_checks(json::JsonWriter &w, const std::vector<Check> &checks) {
  w.begin_array();
  for (const Check &c : checks) {
    w.begin_object().field("name", c.name).key("ok").boolean(c.ok);
    if (!c.detail.empty()) w.field("detail", c.detail);
    if (!c.missing.empty()) {
      w.key("missing").begin_array();
      for (const std::string &m : c.missing) w.value(m);
      w.end_array();
    }
    w.end_object();
  }
  w.end_array();
}

std::string normalize_summary(const Plan &plan, std::string_view summary_json,
                              const SummarizerInfo &info) {
  simdjson::dom::parser parser;
  element s = json::parse(parser, summary_json, "summary");
  json::JsonWriter w;
  w.begin_object();
  for (auto [key, value] : s.get_object()) {
    if (key == "provenance") continue;
    w.key(key).element(value);
  }
  simdjson::simdjson_result<element> given = s["provenance"];
  w.key("provenance").begin_object().key("source_event_ids").begin_array();
  for (element r : items_of(given["source_event_ids"])) w.element(r);
  w.end_array().key("range");
  write_range(w, plan);
  element summarizer;
  if (!given["summarizer"].get(summarizer) && summarizer.is_object())
    w.key("summarizer").element(summarizer);
  else
    w.key("summarizer")
        .begin_object()
        .field("name", info.name)
        .field("version", info.version)
        .end_object();
  if (!plan.previous_compaction_id.empty())
    w.field("previous_compaction_id", plan.previous_compaction_id);
  w.end_object().end_object();
  return w.take();
}

} // namespace ctxdb::compact
