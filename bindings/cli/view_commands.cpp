// view_commands.cpp — what the projections show of a branch: messages,
// tool calls, files, the agent's state, and stats.
#include "commands.hpp"

#include "command_io.hpp"
#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace cli {
namespace {
// Prints what the library answered: as it is with --json, else rendered
// for a reader by render(root).
template <class Render>
int print_answer(const Args &args, const std::string &text, Render &&render) {
  if (args.has("--json")) {
    print_row(text);
    return 0;
  }
  JsonDoc doc(text);
  render(doc.root());
  return 0;
}

using BranchView = std::string (ctxdb::Database::*)(std::string_view,
                                                    std::optional<std::string_view>);

// Reads a view of SESSION's --branch (default: main) and prints it: the
// library's JSON array with --json, else each item through print_item, or
// `none` when the array is empty.
template <class PrintItem>
int run_view(const Args &args, BranchView view, const char *what, const char *none,
             PrintItem &&print_item) {
  auto db = open_db(args, Access::read_only);
  std::optional<std::string> branch = args.value("--branch");
  return print_answer(args, (db.*view)(args.positional.at(0), branch), [&](element root) {
    simdjson::dom::array items = array_of(root, what);
    for (element item : items) print_item(item);
    if (items.size() == 0) std::printf("%s\n", none);
  });
}

// A JSON value as text: a string as it is, anything else as compact JSON.
std::string text_of(element e) {
  std::string_view s;
  return e.get_string().get(s) == simdjson::SUCCESS ? std::string(s) : to_json(e);
}

// One block of a message: its type, then what it holds.
std::string describe_block(element b) {
  std::string_view type = get_string(b, "type");
  std::string out(type);
  auto add = [&](std::string_view part) {
    if (!part.empty()) out += " " + std::string(part);
  };
  element field;
  if (type == "tool_call") {
    add(get_string(b, "id"));
    add(get_string(b, "name"));
    if (b["args"].get(field) == simdjson::SUCCESS) add(text_of(field));
  } else if (type == "tool_result") {
    add(get_string(b, "tool_call_id"));
    add(get_string(b, "status"));
    if (auto error = get_string(b, "error"); !error.empty()) add("error: " + std::string(error));
    // The ref before the text: a spilled output's preview is long, and the
    // line is cut at its end.
    if (auto art = get_string(b, "artifact_id"); !art.empty()) add("[" + std::string(art) + "]");
    add(get_string(b, "text"));
  } else if (type == "context") {
    // "context instructions agents_md: …" or "context meta: …".
    if (get_string(b, "kind") == "instructions") add("instructions");
    add(get_string(b, "source"));
    out += ": " + std::string(get_string(b, "text"));
  } else if (b["text"].get(field) == simdjson::SUCCESS) {
    out += ": " + text_of(field);
  } else if (b["summary"].get(field) == simdjson::SUCCESS) {
    out += ": " + to_json(field);
  }
  return one_line(out);
}

// A message as "#SEQ ROLE (N tok) " and its first block, then one line per
// further block, indented under the first.
void print_message(element m) {
  std::string head = "#" + std::to_string(get_int(m, "seq")) + " " +
                     one_line(get_string(m, "role")) + " (" + std::to_string(get_int(m, "tokens")) +
                     " tok) ";
  simdjson::dom::array blocks;
  if (m["blocks"].get_array().get(blocks) != simdjson::SUCCESS || blocks.size() == 0) {
    std::printf("%s\n", truncate_cols(head, line_width()).c_str());
    return;
  }
  std::string indent(display_width(head), ' ');
  bool first = true;
  for (element b : blocks) {
    std::string line = (first ? head : indent) + describe_block(b);
    std::printf("%s\n", truncate_cols(line, line_width()).c_str());
    first = false;
  }
}

// The last change of a file: "write #SEQ: summary" (or without a summary).
std::string last_change(element f) {
  simdjson::dom::array changes;
  if (f["changes"].get_array().get(changes) != simdjson::SUCCESS || changes.size() == 0) return "-";
  element c = changes.at(changes.size() - 1);
  std::string out = one_line(get_string(c, "op")) + " #" + std::to_string(get_int(c, "seq"));
  if (auto summary = get_string(c, "change_summary"); !summary.empty())
    out += ": " + truncate_cols(one_line(summary), 60);
  return out;
}

// ---- state and stats -----------------------------------------------------

// A member the library's schema promises; its absence is a library bug.
element member(element obj, std::string_view key) {
  element e;
  if (obj[key].get(e) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, "the library's answer lacks '" + std::string(key) + "'");
  return e;
}

// The members of an array member; none when absent.
simdjson::dom::array items_of(element obj, std::string_view key) {
  simdjson::dom::array items;
  if (obj[key].get_array().get(items) != simdjson::SUCCESS) return simdjson::dom::array();
  return items;
}

// A number member as JSON writes it (a mean, a ratio), "-" for null.
std::string number_of(element obj, std::string_view key) {
  element e = member(obj, key);
  return e.is_null() ? "-" : to_json(e);
}

void state_item(const std::string &text) {
  std::printf("  %s\n", truncate_cols(text, line_width() - 2).c_str());
}

// A section: its title, then its lines, or "(none)".
void state_section(const char *title, const std::vector<std::string> &lines) {
  std::printf("%s\n", title);
  for (const std::string &line : lines) state_item(line);
  if (lines.empty()) state_item("(none)");
}

// A {"text", "event_id"} as "text (event_id)".
std::string sourced(element s) {
  return one_line(get_string(s, "text")) + " (" + std::string(get_string(s, "event_id")) + ")";
}

std::vector<std::string> sourced_list(element obj, std::string_view key, std::string_view label) {
  std::vector<std::string> out;
  for (element s : items_of(obj, key)) out.push_back(std::string(label) + sourced(s));
  return out;
}

// The step markers of a plan: [ ] pending, [>] in progress, [x] done,
// [-] skipped, [!] blocked.
std::string_view step_marker(std::string_view status) {
  if (status == "in_progress") return "[>]";
  if (status == "done") return "[x]";
  if (status == "skipped") return "[-]";
  if (status == "blocked") return "[!]";
  return "[ ]";
}

// A file of the state: "path (N times, last EVENT): change summary".
std::string state_file(element f) {
  int64_t n = get_int(f, "count");
  std::string out = one_line(get_string(f, "path")) + " (" + std::to_string(n) +
                    (n == 1 ? " time" : " times") + ", last " +
                    std::string(get_string(f, "event_id")) + ")";
  if (auto summary = get_string(f, "change_summary"); !summary.empty())
    out += ": " + one_line(summary);
  return out;
}

// A tool result of the state: "id name: error (exit N)".
std::string call_result(element r) {
  std::string out = one_line(get_string(r, "id")) + " " + one_line(get_string(r, "name"));
  if (get_bool(r, "is_error")) out += " error";
  if (auto error = get_string(r, "error"); !error.empty()) out += ": " + one_line(error);
  if (element code = member(r, "exit_code"); code.is_int64())
    out += " (exit " + to_json(code) + ")";
  if (get_bool(r, "retryable")) out += " [retryable]";
  return out;
}

void print_state(element doc) {
  element st = member(doc, "state");
  std::printf("state of %s on %s after %s (seq %lld)\n",
              std::string(get_string(doc, "session_id")).c_str(),
              std::string(get_string(doc, "branch_id")).c_str(),
              std::string(get_string(doc, "event_id")).c_str(),
              static_cast<long long>(get_int(doc, "seq")));

  element goal = member(st, "goal");
  std::vector<std::string> lines;
  for (auto [key, label] : {std::pair{"user_goal", "goal: "}, std::pair{"request", "request: "},
                            std::pair{"current_task", "task: "}})
    if (element g = member(goal, key); g.is_object()) lines.push_back(label + sourced(g));
  for (std::string &line : sourced_list(goal, "acceptance_criteria", "accept: "))
    lines.push_back(std::move(line));
  state_section("Goal", lines);

  element plan = member(st, "plan");
  lines.clear();
  for (element step : items_of(plan, "steps"))
    lines.push_back(std::string(step_marker(get_string(step, "status"))) + " " +
                    one_line(get_string(step, "text")));
  state_section(("Plan (" + std::string(get_string(plan, "status", "none")) + ")").c_str(), lines);

  element constraints = member(st, "constraints");
  lines = sourced_list(constraints, "hard", "hard: ");
  for (auto [key, label] : {std::pair{"soft", "soft: "}, std::pair{"preferences", "prefer: "}})
    for (std::string &line : sourced_list(constraints, key, label))
      lines.push_back(std::move(line));
  state_section("Constraints", lines);

  lines.clear();
  for (element f : items_of(st, "facts")) {
    std::string refs;
    for (element r : items_of(f, "source_refs")) refs += (refs.empty() ? "" : ", ") + text_of(r);
    lines.push_back(one_line(get_string(f, "content")) + " (confidence " +
                    number_of(f, "confidence") + "; from " + refs + ")");
  }
  state_section("Facts", lines);

  lines.clear();
  for (element d : items_of(st, "decisions")) {
    std::string line = one_line(get_string(d, "decision"));
    if (auto why = get_string(d, "rationale"); !why.empty()) line += ": because " + one_line(why);
    lines.push_back(line + " (" + std::string(get_string(d, "event_id")) + ")");
  }
  state_section("Decisions", lines);

  lines.clear();
  for (element q : items_of(st, "open_questions"))
    lines.push_back(one_line(get_string(q, "id")) + ": " + one_line(get_string(q, "text")));
  state_section("Open questions", lines);

  element files = member(st, "files");
  lines.clear();
  for (element f : items_of(files, "read")) lines.push_back(state_file(f));
  state_section("Files read", lines);
  lines.clear();
  for (element f : items_of(files, "modified")) lines.push_back(state_file(f));
  state_section("Files modified", lines);

  element tools = member(st, "tool_state");
  lines.clear();
  for (element c : items_of(tools, "pending")) {
    std::string line = "pending: " + one_line(get_string(c, "id")) + " " +
                       one_line(get_string(c, "name")) + " (" +
                       std::string(get_string(c, "status"));
    if (auto approval = get_string(c, "approval"); !approval.empty())
      line += ", approval " + std::string(approval);
    lines.push_back(line + ")");
  }
  for (element r : items_of(tools, "failed")) lines.push_back("failed: " + call_result(r));
  for (element r : items_of(tools, "last_results")) lines.push_back("result: " + call_result(r));
  state_section("Tool state", lines);

  std::string_view compaction = get_string(st, "last_compaction_id");
  std::printf("Last compaction: %s\n",
              compaction.empty() ? "none" : std::string(compaction).c_str());
}

// A {count, total, max, mean} of milliseconds.
std::string span_ms(element span) {
  if (get_int(span, "count") == 0) return "none";
  return std::to_string(get_int(span, "count")) + " timed, total " +
         std::to_string(get_int(span, "total")) + " ms, max " +
         std::to_string(get_int(span, "max")) + " ms, mean " + number_of(span, "mean") + " ms";
}

void print_stats(element r) {
  auto n = [](element obj, std::string_view key) { return std::to_string(get_int(obj, key)); };
  std::string_view sid = get_string(r, "session_id");
  if (sid.empty())
    std::printf("stats of %s sessions\n", n(r, "sessions").c_str());
  else
    std::printf("stats of %s\n", std::string(sid).c_str());
  element messages = member(r, "messages"), tokens = member(r, "tokens");
  element counted = member(tokens, "counted"), usage = member(tokens, "usage");
  element tools = member(r, "tools"), approvals = member(r, "approvals");
  element compactions = member(r, "compactions"), context = member(r, "context");
  element cost = member(r, "cost");
  std::vector<std::vector<std::string>> rows = {
      {"events", n(r, "events")},
      {"messages", n(messages, "user") + " user, " + n(messages, "assistant") + " assistant"},
      {"tokens", n(counted, "total") + " counted by " + one_line(get_string(counted, "counter")) +
                     ": " + n(counted, "user") + " user, " + n(counted, "assistant") +
                     " assistant, " + n(counted, "tool") + " tool, " + n(counted, "summary") +
                     " summary, " + n(counted, "context") + " context"},
      {"usage", n(usage, "input") + " in, " + n(usage, "output") + " out, " +
                    n(usage, "cache_read") + " cache read, " + n(usage, "cache_write") +
                    " cache write, " + n(usage, "reasoning") + " reasoning"},
      {"cost", get_int(cost, "priced_messages") == 0
                   ? std::string("none (no price table, or no priced model)")
                   : "$" + number_of(cost, "usd") + " over " + n(cost, "priced_messages") +
                         " priced messages"},
      {"tool calls", n(tools, "calls") + " calls, " + n(tools, "results") + " results, " +
                         n(tools, "errors") + " errors, " + n(tools, "failures") + " failures, " +
                         n(tools, "cancelled") + " cancelled"},
      {"tool time", span_ms(member(tools, "duration_ms"))},
      {"latency", span_ms(member(r, "latency_ms"))},
      {"approvals", n(approvals, "requested") + " requested, " + n(approvals, "granted") +
                        " granted, " + n(approvals, "denied") + " denied"},
      {"compactions", n(compactions, "completed") + " completed, " + n(compactions, "failed") +
                          " failed, " + n(compactions, "tokens_before") + " -> " +
                          n(compactions, "tokens_after") + " tokens (ratio " +
                          number_of(compactions, "ratio") + ")"},
      {"context", n(context, "builds") + " builds, " + n(context, "used_tokens") + " tokens used"},
      {"errors", n(r, "errors")},
  };
  // Per model (database-wide): providers' reported input / the compiles' counts.
  const char *label = "calibration";
  simdjson::dom::array models;
  if (!r["calibration"].get(models))
    for (element m : models) {
      rows.push_back({label, one_line(get_string(m, "model")) + ": x" + number_of(m, "ratio") +
                                 " (" + n(m, "reported_tokens") + " reported / " +
                                 n(m, "estimated_tokens") + " counted, " + n(m, "samples") +
                                 " samples)"});
      label = "";
    }
  if (*label) rows.push_back({label, "none"});
  print_table(rows);
}

} // namespace

int cmd_messages(const Args &args) {
  return run_view(args, &ctxdb::Database::messages, "messages", "no messages", print_message);
}

int cmd_tool_calls(const Args &args) {
  std::vector<std::vector<std::string>> rows = {{"SEQ", "CALL", "NAME", "STATUS", "DURATION"}};
  int rc =
      run_view(args, &ctxdb::Database::tool_calls, "tool_calls", "no tool calls", [&](element c) {
        element result;
        bool done = c["result"].get(result) == simdjson::SUCCESS && result.is_object();
        std::string status = one_line(get_string(c, "status"));
        if (auto err = done ? get_string(result, "error") : ""; !err.empty())
          status += ": " + truncate_cols(one_line(err), 40);
        int64_t ms = done ? get_int(result, "duration_ms", -1) : -1;
        rows.push_back({std::to_string(get_int(c, "seq")), one_line(get_string(c, "call_id")),
                        one_line(get_string(c, "name", "-")), status,
                        ms < 0 ? "-" : std::to_string(ms) + " ms"});
      });
  if (rows.size() > 1) print_table(rows);
  return rc;
}

int cmd_files(const Args &args) {
  std::vector<std::vector<std::string>> rows = {{"PATH", "READS", "WRITES", "LAST CHANGE"}};
  int rc = run_view(args, &ctxdb::Database::files, "files", "no files", [&](element f) {
    rows.push_back({one_line(get_string(f, "path")), std::to_string(get_int(f, "reads")),
                    std::to_string(get_int(f, "writes")), last_change(f)});
  });
  if (rows.size() > 1) print_table(rows);
  return rc;
}

int cmd_state(const Args &args) {
  std::string query = "{";
  if (auto branch = args.value("--branch")) query += "\"branch_id\":" + json_quote(*branch);
  if (auto at = args.value("--at"))
    query += std::string(query.size() > 1 ? "," : "") + "\"at\":" + json_quote(*at);
  query += "}";
  auto db = open_db(args, Access::read_only);
  return print_answer(args, db.state(args.positional.at(0), query), print_state);
}

int cmd_stats(const Args &args) {
  std::optional<std::string_view> session;
  if (!args.positional.empty()) session = args.positional[0];
  auto db = open_db(args, Access::read_only);
  return print_answer(args, db.stats(session), print_stats);
}

} // namespace cli
