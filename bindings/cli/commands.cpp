// commands.cpp — one function per command. Each opens the database, makes
// the one or two library calls the command stands for, and prints the
// result; everything about events and hashes is the library's business.
#include "commands.hpp"

#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

namespace cli {
namespace {

// How a command uses the file. Inspections open it read-only, so looking
// never writes; commands that need existing data refuse a missing file
// rather than leave an empty database behind a mistyped path.
enum class Access { create, existing, read_only };

std::string db_path(const Args &args) {
  if (args.db) return *args.db;
  const char *env = std::getenv("CTXDB_DB");
  if (env && *env) return env;
  throw UsageError("no database: pass --db PATH or set CTXDB_DB");
}

ctxdb::Database open_db(const Args &args, Access access) {
  std::string path = db_path(args);
  if (access != Access::create && !std::filesystem::exists(path))
    throw ctxdb::Error(CTXDB_IO, "no database at '" + path + "' (create one with 'ctxdb init')");
  if (access == Access::read_only) return ctxdb::Database::open(path, R"({"read_only":true})");
  return ctxdb::Database::open(path);
}

// Reads a whole stream; NDJSON goes to the library in one call.
std::string read_all(std::FILE *f, const std::string &name) {
  std::string data;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  if (std::ferror(f))
    throw ctxdb::Error(CTXDB_IO, "cannot read " + name + ": " + std::strerror(errno));
  return data;
}

std::string read_input(const std::string &file) {
  if (file == "-") return read_all(stdin, "stdin");
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(file.c_str(), "rb"), std::fclose);
  if (!f) throw ctxdb::Error(CTXDB_IO, "cannot open '" + file + "': " + std::strerror(errno));
  return read_all(f.get(), "'" + file + "'");
}

void print_row(std::string_view row) {
  std::fwrite(row.data(), 1, row.size(), stdout);
  std::fputc('\n', stdout);
}

// The array a library call returned; anything else is a library bug.
simdjson::dom::array array_of(element root, const char *what) {
  simdjson::dom::array items;
  if (root.get_array().get(items) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, std::string(what) + " did not return an array");
  return items;
}

// ---- init ----------------------------------------------------------------

int cmd_init(const Args &args) {
  auto db = open_db(args, Access::create);
  db.close(); // closing explicitly reports a failure the destructor would hide
  std::error_code ec;
  auto shown = std::filesystem::weakly_canonical(db_path(args), ec);
  std::printf("%s\n", ec ? db_path(args).c_str() : shown.c_str());
  return 0;
}

// ---- session new ---------------------------------------------------------

// The SessionStarted payload: the --meta object's fields plus agent_id,
// where an explicit --agent wins over an agent_id inside --meta.
std::string session_payload(const Args &args) {
  simdjson::dom::parser parser;
  simdjson::dom::object meta;
  std::string meta_text = args.value("--meta").value_or("{}");
  element root;
  if (parser.parse(meta_text).get(root) != simdjson::SUCCESS ||
      root.get_object().get(meta) != simdjson::SUCCESS)
    throw UsageError("--meta must be a JSON object");
  std::string agent =
      args.value("--agent").value_or(std::string(get_string(root, "agent_id", "cli")));
  std::string out = "{\"agent_id\":" + json_quote(agent);
  for (auto field : meta) {
    if (field.key == "agent_id") continue;
    out += "," + json_quote(field.key) + ":" + to_json(field.value);
  }
  return out + "}";
}

// The value of a flag that takes a non-negative integer (a seq, a time).
int64_t non_negative(std::string_view flag, const std::string &text, std::string_view what) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0)
    throw UsageError(std::string(flag) + " needs " + std::string(what) + ", got '" + text + "'");
  return n;
}

int cmd_session_new(const Args &args) {
  std::string request = "{";
  if (auto id = args.value("--id")) request += "\"id\":" + json_quote(*id) + ",";
  if (auto eid = args.value("--event-id")) request += "\"event_id\":" + json_quote(*eid) + ",";
  if (auto ts = args.value("--ts"))
    request +=
        "\"ts\":" + std::to_string(non_negative("--ts", *ts, "milliseconds since the Unix epoch")) +
        ",";
  request += "\"payload\":" + session_payload(args) + "}";
  auto db = open_db(args, Access::create);
  JsonDoc session(db.session_create(request));
  std::printf("%s\n", std::string(get_string(session.root(), "id")).c_str());
  return 0;
}

// ---- sessions ------------------------------------------------------------

int cmd_sessions(const Args &args) {
  auto db = open_db(args, Access::read_only);
  JsonDoc list(db.session_list());
  std::vector<std::vector<std::string>> rows = {{"ID", "AGENT", "EVENTS", "FIRST", "LAST"}};
  for (element s : array_of(list.root(), "session_list")) {
    rows.push_back({std::string(get_string(s, "id")),
                    one_line(get_string(s, "agent_id")), // host text
                    std::to_string(get_int(s, "event_count")), iso_utc(get_int(s, "created_ts")),
                    iso_utc(get_int(s, "last_ts"))});
  }
  if (rows.size() == 1)
    std::printf("no sessions\n");
  else
    print_table(rows);
  return 0;
}

int cmd_session_show(const Args &args) {
  auto db = open_db(args, Access::read_only);
  print_row(db.session_get(args.positional.at(0)));
  return 0;
}

// ---- append --------------------------------------------------------------

// --each: every line in its own transaction (ctxdb_append), as a live host
// appends; stops at the first bad line, keeping the lines before it.
int64_t append_each(ctxdb::Database &db, const std::string &session, std::string_view ndjson,
                    int64_t &last_seq) {
  int64_t count = 0, line_no = 0;
  while (!ndjson.empty()) {
    size_t nl = ndjson.find('\n');
    std::string_view line = ndjson.substr(0, nl);
    ndjson = nl == std::string_view::npos ? std::string_view{} : ndjson.substr(nl + 1);
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    try {
      JsonDoc event(db.append(session, line));
      last_seq = get_int(event.root(), "seq");
    } catch (const ctxdb::Error &e) {
      throw ctxdb::Error(e.code(), "line " + std::to_string(line_no) + ": " + e.what() + " (" +
                                       std::to_string(count) + " earlier lines were appended)");
    }
    ++count;
  }
  return count;
}

int cmd_append(const Args &args) {
  const std::string &session = args.positional.at(0);
  std::string ndjson = read_all(stdin, "stdin");
  auto db = open_db(args, Access::existing);
  int64_t count = 0, last_seq = 0;
  if (args.has("--each")) {
    count = append_each(db, session, ndjson, last_seq);
  } else {
    JsonDoc result(db.append_batch(session, ndjson));
    count = get_int(result.root(), "count");
    last_seq = get_int(result.root(), "last_seq");
  }
  std::printf("appended %lld event%s", static_cast<long long>(count), count == 1 ? "" : "s");
  if (count > 0) std::printf("; last seq %lld", static_cast<long long>(last_seq));
  std::printf("\n");
  return 0;
}

// ---- log -----------------------------------------------------------------

int64_t parse_from_seq(const Args &args) {
  auto text = args.value("--from");
  if (!text) return 1;
  return non_negative("--from", *text, "a sequence number");
}

// One event per line, at most kLogWidth characters. The date is printed as
// a separator line when it changes, which keeps each row narrow enough to
// leave room for the payload summary.
constexpr std::size_t kLogWidth = 100;

// With show_branch (a session of several branches), the summary starts
// with the event's branch id, as "[alt1]".
void print_event_line(std::string_view row, std::string &last_date, bool show_branch = false) {
  JsonDoc event(row);
  element e = event.root();
  std::string when = iso_utc(get_int(e, "ts"));
  std::string date = when.substr(0, 10), time = when.substr(11, 12);
  if (date != last_date) std::printf("-- %s (UTC)\n", date.c_str());
  last_date = date;
  element payload;
  std::string summary =
      e["payload"].get(payload) == simdjson::SUCCESS ? summarize_payload(payload) : "";
  if (show_branch) summary = "[" + one_line(get_string(e, "branch_id")) + "] " + summary;
  // Type and actor are host text too, hence one_line. The widths fit the
  // longest core type (AssistantMessageCreated) and actor (assistant).
  std::string line = pad_left(std::to_string(get_int(e, "seq")), 4) + "  " + time + "  " +
                     pad_right(one_line(get_string(e, "type")), 23) + " " +
                     pad_right(one_line(get_string(e, "actor")), 9) + " " + summary;
  std::printf("%s\n", truncate_cols(line, kLogWidth).c_str());
}

// Whether the session has forked: then log lines name each event's branch.
bool has_forks(ctxdb::Database &db, const std::string &session) {
  JsonDoc list(db.branch_list(session));
  simdjson::dom::array branches;
  return list.root().get_array().get(branches) == simdjson::SUCCESS && branches.size() > 1;
}

// The rows of an event iterator over one session: log lines, or the stored
// JSON (--json).
void print_events(ctxdb::Database &db, const std::string &session, ctxdb::Iter &it,
                  const Args &args) {
  bool json = args.has("--json"), show_branch = !json && has_forks(db, session);
  std::string_view row;
  std::string last_date;
  while (it.next(row)) {
    if (json)
      print_row(row);
    else
      print_event_line(row, last_date, show_branch);
  }
}

int cmd_log(const Args &args) {
  const std::string &session = args.positional.at(0);
  int64_t from = parse_from_seq(args);
  auto db = open_db(args, Access::read_only);
  db.session_get(session); // an unknown session is an error, not an empty log
  auto it = db.events(session, from);
  print_events(db, session, it, args);
  return 0;
}

int cmd_event(const Args &args) {
  auto db = open_db(args, Access::read_only);
  print_row(db.event_get(args.positional.at(0)));
  return 0;
}

// ---- the session tree ----------------------------------------------------

int cmd_fork(const Args &args) {
  std::string spec = "{\"event_id\":" + json_quote(args.positional.at(1));
  for (const char *flag : {"--kind", "--name", "--id"})
    if (auto v = args.value(flag)) spec += "," + json_quote(flag + 2) + ":" + json_quote(*v);
  spec += "}";
  auto db = open_db(args, Access::existing);
  print_row(db.branch_fork(args.positional.at(0), spec));
  return 0;
}

int cmd_path(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::optional<std::string> branch = args.value("--branch");
  auto it = db.branch_path(args.positional.at(0), branch);
  print_events(db, args.positional.at(0), it, args);
  return 0;
}

// One branch of `ctxdb tree`: id, kind, name, fork point, size and leaf.
std::string describe_branch(element b) {
  std::string_view kind = get_string(b, "kind"), name = get_string(b, "name");
  std::string out = std::string(get_string(b, "id")) + "  " + std::string(kind);
  if (!name.empty() && !(kind == "main" && name == "main")) out += " \"" + one_line(name) + "\"";
  if (auto fork = get_string(b, "fork_event_id"); !fork.empty())
    out += "  from " + std::string(fork) + " (seq " + std::to_string(get_int(b, "fork_seq")) + ")";
  int64_t n = get_int(b, "event_count");
  out += "  " + std::to_string(n) + (n == 1 ? " event" : " events");
  return out + "  leaf " + std::string(get_string(b, "leaf_event_id")) + " (seq " +
         std::to_string(get_int(b, "leaf_seq")) + ")";
}

using BranchKids = std::map<std::string_view, std::vector<element>>;

// Prints b, then its forks indented under it with box-drawing lines.
void draw_branch(element b, const BranchKids &kids, const std::string &indent,
                 std::string_view elbow) {
  std::printf("%s%s%s\n", indent.c_str(), std::string(elbow).c_str(), describe_branch(b).c_str());
  auto it = kids.find(get_string(b, "id"));
  if (it == kids.end()) return;
  std::string next = indent + (elbow.empty() ? "" : elbow == "└─ " ? "   " : "│  ");
  for (std::size_t i = 0; i < it->second.size(); ++i)
    draw_branch(it->second[i], kids, next, i + 1 == it->second.size() ? "└─ " : "├─ ");
}

int cmd_tree(const Args &args) {
  auto db = open_db(args, Access::read_only);
  JsonDoc list(db.branch_list(args.positional.at(0)));
  simdjson::dom::array branches = array_of(list.root(), "branch_list");
  std::vector<element> roots;
  BranchKids kids; // by parent branch id, in the order the branches were opened
  for (element b : branches) {
    std::string_view parent = get_string(b, "parent_branch_id");
    if (parent.empty())
      roots.push_back(b);
    else
      kids[parent].push_back(b);
  }
  for (element root : roots) draw_branch(root, kids, "", "");
  return 0;
}

int cmd_children(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::string text = db.event_children(args.positional.at(0));
  if (args.has("--json")) {
    print_row(text);
    return 0;
  }
  JsonDoc doc(text);
  simdjson::dom::array events, sessions;
  if (doc.root()["events"].get_array().get(events) != simdjson::SUCCESS ||
      doc.root()["sessions"].get_array().get(sessions) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, "event_children did not return its arrays");
  std::string last_date;
  for (element e : events) print_event_line(to_json(e), last_date);
  for (element s : sessions)
    std::printf("session %s  agent %s\n", std::string(get_string(s, "id")).c_str(),
                one_line(get_string(s, "agent_id")).c_str());
  if (events.size() == 0 && sessions.size() == 0) std::printf("no children\n");
  return 0;
}

// ---- views of a branch ---------------------------------------------------

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
    add(get_string(b, "text"));
    if (auto art = get_string(b, "artifact_id"); !art.empty()) add("[" + std::string(art) + "]");
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
    std::printf("%s\n", truncate_cols(head, kLogWidth).c_str());
    return;
  }
  std::string indent(display_width(head), ' ');
  bool first = true;
  for (element b : blocks) {
    std::string line = (first ? head : indent) + describe_block(b);
    std::printf("%s\n", truncate_cols(line, kLogWidth).c_str());
    first = false;
  }
}

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

int cmd_files(const Args &args) {
  std::vector<std::vector<std::string>> rows = {{"PATH", "READS", "WRITES", "LAST CHANGE"}};
  int rc = run_view(args, &ctxdb::Database::files, "files", "no files", [&](element f) {
    rows.push_back({one_line(get_string(f, "path")), std::to_string(get_int(f, "reads")),
                    std::to_string(get_int(f, "writes")), last_change(f)});
  });
  if (rows.size() > 1) print_table(rows);
  return rc;
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
  std::printf("  %s\n", truncate_cols(text, kLogWidth - 2).c_str());
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

int cmd_state(const Args &args) {
  std::string query = "{";
  if (auto branch = args.value("--branch")) query += "\"branch_id\":" + json_quote(*branch);
  if (auto at = args.value("--at"))
    query += std::string(query.size() > 1 ? "," : "") + "\"at\":" + json_quote(*at);
  query += "}";
  auto db = open_db(args, Access::read_only);
  return print_answer(args, db.state(args.positional.at(0), query), print_state);
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
  std::vector<std::vector<std::string>> rows = {
      {"events", n(r, "events")},
      {"messages", n(messages, "user") + " user, " + n(messages, "assistant") + " assistant"},
      {"tokens", n(counted, "total") + " counted by " + one_line(get_string(counted, "counter")) +
                     ": " + n(counted, "user") + " user, " + n(counted, "assistant") +
                     " assistant, " + n(counted, "tool") + " tool, " + n(counted, "summary") +
                     " summary"},
      {"usage", n(usage, "input") + " in, " + n(usage, "output") + " out, " +
                    n(usage, "cache_read") + " cache read, " + n(usage, "cache_write") +
                    " cache write"},
      {"tool calls", n(tools, "calls") + " calls, " + n(tools, "results") + " results, " +
                         n(tools, "errors") + " errors, " + n(tools, "failures") + " failures"},
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
  print_table(rows);
}

int cmd_stats(const Args &args) {
  std::optional<std::string_view> session;
  if (!args.positional.empty()) session = args.positional[0];
  auto db = open_db(args, Access::read_only);
  return print_answer(args, db.stats(session), print_stats);
}

// ---- verify --------------------------------------------------------------

int cmd_verify(const Args &args) {
  std::optional<std::string_view> session;
  if (!args.positional.empty()) session = args.positional[0];
  auto db = open_db(args, Access::read_only);
  JsonDoc report(db.verify(session));
  element r = report.root();
  if (get_bool(r, "ok")) {
    std::printf("ok: %lld sessions, %lld events\n", static_cast<long long>(get_int(r, "sessions")),
                static_cast<long long>(get_int(r, "events")));
    return 0;
  }
  element broken;
  if (r["first_broken"].get(broken) != simdjson::SUCCESS) {
    std::printf("broken: %s\n", to_json(r).c_str());
    return 1;
  }
  std::printf("broken: session %s seq %lld event %s: %s\n",
              std::string(get_string(broken, "session_id")).c_str(),
              static_cast<long long>(get_int(broken, "seq")),
              std::string(get_string(broken, "event_id")).c_str(),
              std::string(get_string(broken, "problem")).c_str());
  return 1;
}

// ---- rebuild -------------------------------------------------------------

int cmd_rebuild(const Args &args) {
  auto db = open_db(args, Access::existing);
  JsonDoc report(db.rebuild(args.has("--check") ? R"({"check":true})" : "{}"));
  element r = report.root();
  std::printf("replayed %lld events\n", static_cast<long long>(get_int(r, "events")));
  simdjson::dom::array tables;
  if (r["tables"].get_array().get(tables) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, "rebuild did not return its tables");
  for (element t : tables) {
    bool same = get_string(t, "before") == get_string(t, "after");
    std::printf("  %-16s %8lld rows  %s\n", std::string(get_string(t, "table")).c_str(),
                static_cast<long long>(get_int(t, "rows")),
                same ? "unchanged" : "rebuilt: differed");
  }
  return 0;
}

// ---- export / import -----------------------------------------------------

int cmd_export(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::optional<ctxdb::Iter> it;
  if (args.positional.empty()) {
    it.emplace(db.all_events());
  } else {
    db.session_get(args.positional[0]); // an unknown session is an error
    it.emplace(db.events(args.positional[0]));
  }
  std::string_view row;
  while (it->next(row)) print_row(row);
  return 0;
}

int cmd_import(const Args &args) {
  std::string ndjson = read_input(args.positional.at(0));
  auto db = open_db(args, Access::create);
  JsonDoc result(db.import_ndjson(ndjson));
  std::printf("imported %lld, skipped %lld\n",
              static_cast<long long>(get_int(result.root(), "imported")),
              static_cast<long long>(get_int(result.root(), "skipped")));
  return 0;
}

// ---- the table -----------------------------------------------------------

// The table reads best laid out by hand.
// clang-format off
const CommandSpec kCommands[] = {
    {"init", "", "create or open the database file and print its path",
     "Creates the database file when it does not exist (an existing one is\n"
     "opened and left as it is) and prints its absolute path.\n",
     {}, {}, 0, 0, cmd_init},
    {"session new", "[--id ID] [--agent AGENT] [--meta JSON] [--ts MS]\n"
     "                         [--event-id ID]",
     "start a session and print its id",
     "Appends a SessionStarted event whose payload is {\"agent_id\": AGENT,\n"
     "...the fields of the --meta object} and prints the new session's id.\n"
     "\n"
     "  --id ID        use this session id instead of a generated one\n"
     "  --agent AGENT  the agent_id (default: --meta's, else \"cli\")\n"
     "  --meta JSON    a JSON object merged into the payload (model, cwd...)\n"
     "  --ts MS        the start time, in ms since the Unix epoch (default:\n"
     "                 now), e.g. to replay a recorded session\n"
     "  --event-id ID  the id of the SessionStarted event (default: generated)\n",
     {"--id", "--agent", "--meta", "--ts", "--event-id"}, {}, 0, 0, cmd_session_new},
    {"sessions", "", "list sessions: id, agent, events, first and last time",
     "Prints one row per session, oldest first; times are UTC.\n",
     {}, {}, 0, 0, cmd_sessions},
    {"session show", "SESSION", "print one session as JSON",
     "Prints the session object: id, agent_id, started_event_id, created_ts,\n"
     "last_ts, event_count, last_seq and meta (its SessionStarted payload).\n",
     {}, {}, 1, 1, cmd_session_show},
    {"append", "SESSION [--each]", "append NDJSON events from stdin to a session",
     "Reads events from stdin, one JSON object per line, each like\n"
     "  {\"type\": TYPE, \"actor\": ACTOR, \"payload\": {...}}\n"
     "and appends them in one transaction: all of them or, on any error,\n"
     "none (the error names the line). Prints the count and the last seq.\n"
     "\n"
     "  --each  append every line in its own transaction instead, as a live\n"
     "          host does; a bad line stops there, keeping those before it\n",
     {}, {"--each"}, 1, 1, cmd_append},
    {"event", "EVENT_ID", "print one stored event as JSON",
     "Prints the stored event with this id: seq, ts, type, actor, payload\n"
     "and its hashes.\n",
     {}, {}, 1, 1, cmd_event},
    {"log", "SESSION [--from SEQ] [--json]", "show a session's events",
     "Lists the session's events in seq order: seq, time (UTC), type, actor\n"
     "and a one-line summary of the payload, which starts with the event's\n"
     "branch, as [BRANCH_ID], once the session has forked.\n"
     "\n"
     "  --from SEQ  start at this sequence number (default 1)\n"
     "  --json      print the stored events as NDJSON instead\n",
     {"--from"}, {"--json"}, 1, 1, cmd_log},
    {"tree", "SESSION", "draw a session's tree of branches",
     "Draws the session's branches, each indented under the branch it forked\n"
     "from: its id, kind and name, the event it forked from (seq), its own\n"
     "event count and its leaf (the event a new one on it would follow).\n",
     {}, {}, 1, 1, cmd_tree},
    {"fork", "SESSION EVENT [--kind KIND] [--name NAME] [--id ID]",
     "fork a branch at an event and print it",
     "Appends a BranchCreated event whose parent is EVENT (any event of the\n"
     "session) and prints the new branch as JSON. Append to it with\n"
     "\"branch_id\" set to its id or name.\n"
     "\n"
     "  --kind KIND  fork (default), subagent or what_if\n"
     "  --name NAME  a name to find the branch by\n"
     "  --id ID      the branch's id (default: generated)\n",
     {"--kind", "--name", "--id"}, {}, 2, 2, cmd_fork},
    {"path", "SESSION [--branch BRANCH] [--json]", "show the events of a branch's path",
     "Lists the events on the path of a branch, root to leaf: its ancestors'\n"
     "events up to each fork point, then its own; printed as 'ctxdb log' does.\n"
     "\n"
     "  --branch BRANCH  the branch's id or a name unique in the session\n"
     "                   (default: main)\n"
     "  --json           print the stored events as NDJSON instead\n",
     {"--branch"}, {"--json"}, 1, 1, cmd_path},
    {"children", "EVENT [--json]", "show what follows an event",
     "Lists the children of an event: the next event on its branch, then the\n"
     "first event of each branch forked at it, then the child sessions it\n"
     "spawned.\n"
     "\n"
     "  --json  print {\"event_id\", \"events\", \"sessions\"} as JSON instead\n",
     {}, {"--json"}, 1, 1, cmd_children},
    {"messages", "SESSION [--branch BRANCH] [--json]", "show the messages of a branch",
     "Lists the messages on the path of a branch, root to leaf: '#SEQ ROLE\n"
     "(N tok)' and one line per block (text, thinking, tool_call ID NAME ARGS,\n"
     "tool_result CALL STATUS OUTPUT, summary), each cut to 100 characters.\n"
     "\n"
     "  --branch BRANCH  the branch's id or a name unique in the session\n"
     "                   (default: main)\n"
     "  --json           print the messages as a JSON array instead\n",
     {"--branch"}, {"--json"}, 1, 1, cmd_messages},
    {"tool-calls", "SESSION [--branch BRANCH] [--json]", "show the tool calls of a branch",
     "Lists the tool calls on the path of a branch in call order: the seq of\n"
     "the message that made it, its id, name, status as seen from the branch\n"
     "(pending until its result is on the path; success; error and why) and\n"
     "how long it took.\n"
     "\n"
     "  --branch BRANCH  the branch's id or a name unique in the session\n"
     "                   (default: main)\n"
     "  --json           print the tool calls as a JSON array instead\n",
     {"--branch"}, {"--json"}, 1, 1, cmd_tool_calls},
    {"files", "SESSION [--branch BRANCH] [--json]", "show the files a branch touched",
     "Lists the files read or written on the path of a branch, by path: how\n"
     "many reads and writes (FileWritten and DiffApplied), and the last change\n"
     "(write or diff, its seq and its change summary).\n"
     "\n"
     "  --branch BRANCH  the branch's id or a name unique in the session\n"
     "                   (default: main)\n"
     "  --json           print the files as a JSON array instead\n",
     {"--branch"}, {"--json"}, 1, 1, cmd_files},
    {"state", "SESSION [--branch BRANCH] [--at EVENT] [--json]",
     "show the agent state of a branch",
     "Prints the agent's working state on a branch, folded from its events:\n"
     "Goal, Plan (steps marked [ ] pending, [>] in progress, [x] done,\n"
     "[-] skipped, [!] blocked), Constraints, Facts (confidence and sources),\n"
     "Decisions, Open questions, Files read and modified, Tool state and the\n"
     "last compaction.\n"
     "\n"
     "  --branch BRANCH  the branch's id or a name unique in the session\n"
     "                   (default: main)\n"
     "  --at EVENT       the state right after EVENT, on its own branch\n"
     "                   (time travel; not with --branch)\n"
     "  --json           print the state as JSON instead\n",
     {"--branch", "--at"}, {"--json"}, 1, 1, cmd_state},
    {"stats", "[SESSION] [--json]", "show counters: events, tokens, tools, latency",
     "Prints one session's stats, or every session's totals: events,\n"
     "messages, tokens (counted per role, and the usage models reported),\n"
     "tool calls and their time, latency, approvals, compactions, context\n"
     "builds and errors.\n"
     "\n"
     "  --json  print the stats as JSON instead\n",
     {}, {"--json"}, 0, 1, cmd_stats},
    {"verify", "[SESSION]", "check the hash chain",
     "Recomputes the hash chain of one session, or of every session. Prints\n"
     "\"ok: N sessions, M events\" and exits 0, or prints the first broken\n"
     "event and exits 1.\n",
     {}, {}, 0, 1, cmd_verify},
    {"rebuild", "[--check]", "replay the log into every derived table",
     "Clears every derived table (sessions, ...) and replays the whole log\n"
     "into them in one transaction, printing each table's row count and\n"
     "whether it came out as it was. The log itself is never touched.\n"
     "\n"
     "  --check  fail (exit 1, nothing changed) when any rebuilt table differs\n"
     "           from the stored one\n",
     {}, {"--check"}, 0, 0, cmd_rebuild},
    {"export", "[SESSION]", "print stored events as NDJSON",
     "Prints every stored event, one JSON object per line: the whole\n"
     "database in append order, or one session in seq order. The output is\n"
     "what 'ctxdb import' takes; ids, seqs and hashes are kept.\n",
     {}, {}, 0, 1, cmd_export},
    {"import", "FILE", "import an export (FILE, or - for stdin)",
     "Imports NDJSON written by 'ctxdb export' in one transaction. Events\n"
     "already present with identical content are skipped; a hash or seq that\n"
     "does not match is an error naming the line.\n",
     {}, {}, 1, 1, cmd_import},
};
// clang-format on

} // namespace

std::span<const CommandSpec> commands() { return kCommands; }

} // namespace cli
