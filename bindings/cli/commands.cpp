// commands.cpp — one function per command (the session tree's and the
// projections' views live in tree_commands.cpp and view_commands.cpp), and
// the table of them all. Each opens the database, makes the one or two
// library calls the command stands for, and prints the result; everything
// about events and hashes is the library's business.
#include "commands.hpp"

#include "command_io.hpp"
#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace cli {
namespace {

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
  std::string text = db.session_list();
  if (args.has("--json")) {
    print_row(text);
    return 0;
  }
  JsonDoc list(text);
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

// ---- record ----------------------------------------------------------------

// A provider's response from stdin, recorded as one AssistantMessageCreated.
int cmd_record(const Args &args) {
  const std::string &session = args.positional.at(0);
  auto format = args.value("--format");
  if (!format)
    throw UsageError("record needs --format FORMAT (openai.chat, openai.responses, "
                     "anthropic.messages or gemini.generate_content)");
  std::string opts = "{\"format\":" + json_quote(*format);
  if (args.has("--stream")) opts += ",\"stream\":true";
  for (auto [flag, key] : {std::pair{"--parent", "parent_id"}, std::pair{"--branch", "branch_id"},
                           std::pair{"--actor", "actor"}})
    if (auto v = args.value(flag)) opts += std::string(",\"") + key + "\":" + json_quote(*v);
  if (auto ms = args.value("--latency-ms"))
    opts += ",\"latency_ms\":" + std::to_string(non_negative("--latency-ms", *ms, "milliseconds"));
  opts += "}";
  std::string response = read_all(stdin, "stdin");
  auto db = open_db(args, Access::existing);
  std::string event = db.record_response(session, opts, response);
  if (args.has("--json")) {
    print_row(event);
    return 0;
  }
  JsonDoc e(event);
  std::printf("recorded %s at seq %lld\n", std::string(get_string(e.root(), "id")).c_str(),
              static_cast<long long>(get_int(e.root(), "seq")));
  return 0;
}

// ---- log -----------------------------------------------------------------

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

// ---- verify --------------------------------------------------------------

namespace {

// The verify options the flags ask for: {} when none, ctxdb_verify's defaults.
std::string verify_options(const Args &args) {
  std::string o;
  auto add = [&](std::string_view key, const std::string &json) {
    o += (o.empty() ? "{" : ",") + json_quote(key) + ":" + json;
  };
  if (!args.positional.empty()) add("session_id", json_quote(args.positional[0]));
  if (auto mode = args.value("--artifacts")) {
    if (*mode != "none" && *mode != "quick" && *mode != "full")
      throw UsageError("--artifacts: expected none, quick or full, not '" + std::string(*mode) +
                       "'");
    add("artifacts", json_quote(*mode));
  }
  if (auto file = args.value("--anchor")) add("anchor", read_input(std::string(*file)));
  return o.empty() ? "{}" : o + "}";
}

// The artifact line only when it says something: artifacts were checked,
// one is broken, or the flag asked for the check.
void print_verify(element r, bool artifacts_asked) {
  const std::string ok = paint("ok", Colour::kGreen), broken_word = paint("broken", Colour::kRed);
  if (get_bool(r, "ok") || r["first_broken"].error()) {
    std::printf("%s: %lld sessions, %lld events\n",
                get_bool(r, "ok") ? ok.c_str() : ("chain " + ok).c_str(),
                static_cast<long long>(get_int(r, "sessions")),
                static_cast<long long>(get_int(r, "events")));
  } else {
    element broken = r["first_broken"];
    std::printf("%s: session %s seq %lld event %s: %s\n", broken_word.c_str(),
                std::string(get_string(broken, "session_id")).c_str(),
                static_cast<long long>(get_int(broken, "seq")),
                std::string(get_string(broken, "event_id")).c_str(),
                std::string(get_string(broken, "problem")).c_str());
  }
  simdjson::dom::array purged;
  if (r["purged"].get(purged) == simdjson::SUCCESS)
    for (element p : purged)
      std::printf("purged: session %s seq %lld event %s: payload removed by %s\n",
                  std::string(get_string(p, "session_id")).c_str(),
                  static_cast<long long>(get_int(p, "seq")),
                  std::string(get_string(p, "event_id")).c_str(),
                  std::string(get_string(p, "purged_by")).c_str());
  element a;
  if (r["artifacts"].get(a) == simdjson::SUCCESS &&
      (artifacts_asked || !get_bool(a, "ok") || get_int(a, "artifacts") > 0)) {
    std::printf(
        "artifacts %s (%s): %lld artifacts, %lld chunks, %lld bytes\n",
        get_bool(a, "ok") ? ok.c_str() : broken_word.c_str(),
        std::string(get_string(a, "mode")).c_str(), static_cast<long long>(get_int(a, "artifacts")),
        static_cast<long long>(get_int(a, "chunks")), static_cast<long long>(get_int(a, "bytes")));
    element broken;
    if (a["first_broken"].get(broken) == simdjson::SUCCESS)
      std::printf("%s: %s\n", broken_word.c_str(),
                  std::string(get_string(broken, "problem")).c_str());
  }
  if (r["anchor"].get(a) == simdjson::SUCCESS) {
    if (get_bool(a, "ok"))
      std::printf("anchor %s: the file extends its %lld events\n", ok.c_str(),
                  static_cast<long long>(get_int(a, "events")));
    else
      std::printf("anchor %s: %s\n", broken_word.c_str(),
                  std::string(get_string(a, "problem")).c_str());
  }
}

} // namespace

int cmd_verify(const Args &args) {
  auto db = open_db(args, Access::read_only);
  JsonDoc report(db.verify_with(verify_options(args)));
  if (args.has("--json"))
    std::printf("%s\n", to_json(report.root()).c_str());
  else
    print_verify(report.root(), args.value("--artifacts").has_value());
  return get_bool(report.root(), "ok") ? 0 : 1;
}

// ---- anchor --------------------------------------------------------------

int cmd_anchor(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::printf("%s\n", db.anchor().c_str());
  return 0;
}

// ---- rebuild -------------------------------------------------------------

int cmd_rebuild(const Args &args) {
  auto db = open_db(args, Access::existing);
  auto flag = [&](const char *name) { return args.has(name) ? "true" : "false"; };
  JsonDoc report(db.rebuild(std::string(R"({"check":)") + flag("--check") + R"(,"search":)" +
                            flag("--search") + "}"));
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
  simdjson::dom::array kept;
  if (r["kept"].get_array().get(kept) == simdjson::SUCCESS && kept.size() > 0) {
    std::string names;
    for (element k : kept)
      (names += names.empty() ? "" : ", ") += std::string(k.get_string().value());
    std::printf("  kept, caught up (indexes of the log; --search re-derives them): %s\n",
                names.c_str());
  }
  element a;
  if (r["artifacts"].get(a) == simdjson::SUCCESS)
    std::printf("  artifacts checked: %lld artifacts, %lld chunks re-hashed\n",
                static_cast<long long>(get_int(a, "artifacts")),
                static_cast<long long>(get_int(a, "chunks")));
  return 0;
}

// ---- optimize ------------------------------------------------------------

int cmd_optimize(const Args &args) {
  auto db = open_db(args, Access::existing);
  std::string out = db.optimize("{}");
  if (args.has("--json")) {
    std::printf("%s\n", out.c_str());
    return 0;
  }
  JsonDoc report(out);
  simdjson::dom::array indexes;
  if (report.root()["indexes"].get_array().get(indexes) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, "optimize did not return its indexes");
  for (element i : indexes)
    std::printf("  %-14s segments %lld -> %lld, %lld pages\n",
                std::string(get_string(i, "index")).c_str(),
                static_cast<long long>(get_int(i, "segments_before")),
                static_cast<long long>(get_int(i, "segments_after")),
                static_cast<long long>(get_int(i, "pages")));
  return 0;
}

// ---- export / import -----------------------------------------------------

// Refuses to export chains that fail verify: an export of them would
// carry the damage into every file it is imported into, where import
// rejects it anyway. Checked before the first row, so nothing is printed.
void require_verified(ctxdb::Database &db, std::optional<std::string_view> session) {
  JsonDoc report(db.verify(session));
  element r = report.root();
  if (get_bool(r, "ok")) return;
  std::string where = "the file fails verify";
  if (element broken; r["first_broken"].get(broken) == simdjson::SUCCESS) {
    where += ": session " + std::string(get_string(broken, "session_id")) + " seq " +
             std::to_string(get_int(broken, "seq"));
    if (auto id = get_string(broken, "event_id"); !id.empty()) where += " event " + std::string(id);
    where += ": " + std::string(get_string(broken, "problem"));
  }
  throw ctxdb::Error(CTXDB_CORRUPT,
                     where + "; nothing exported (--no-verify exports what is stored anyway)");
}

int cmd_export(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::optional<ctxdb::Iter> it;
  std::optional<std::string_view> session;
  if (!args.positional.empty()) {
    db.session_get(args.positional[0]); // an unknown session is an error
    session = args.positional[0];
  }
  if (!args.has("--no-verify")) require_verified(db, session);
  if (!args.has("--events-only"))
    it.emplace(db.export_stream(session));
  else if (session)
    it.emplace(db.events(*session));
  else
    it.emplace(db.all_events());
  std::string_view row;
  while (it->next(row)) print_row(row);
  return 0;
}

// ---- import --from: other agents' session files ----------------------------

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int) { g_stop = 1; }

// One pass's report: a line per file that is not unchanged, then the counts.
void print_transcript_report(const std::string &report, bool json) {
  if (json) {
    std::printf("%s\n", report.c_str());
    std::fflush(stdout);
    return;
  }
  JsonDoc doc(report);
  for (element f : array_of(doc.root()["sessions"].value(), "sessions")) {
    std::string status(get_string(f, "status"));
    if (status == "unchanged") continue;
    std::string_view session = get_string(f, "session_id"); // "" before it was read
    std::printf("%-9s %s  %s", status.c_str(), session.empty() ? "-" : std::string(session).c_str(),
                std::string(get_string(f, "file")).c_str());
    if (status == "imported")
      std::printf("  (%lld events, %lld lines)", static_cast<long long>(get_int(f, "events")),
                  static_cast<long long>(get_int(f, "lines")));
    if (auto error = get_string(f, "error"); !error.empty())
      std::printf("\n          %s", std::string(error).c_str());
    std::printf("\n");
  }
  std::printf("imported %lld, unchanged %lld, changed %lld, failed %lld\n",
              static_cast<long long>(get_int(doc.root(), "imported")),
              static_cast<long long>(get_int(doc.root(), "unchanged")),
              static_cast<long long>(get_int(doc.root(), "changed")),
              static_cast<long long>(get_int(doc.root(), "failed")));
  std::fflush(stdout);
}

std::string transcript_options(const std::string &format, const std::string &path, bool final) {
  return "{\"format\":" + json_quote(format) + ",\"path\":" + json_quote(path) +
         ",\"final\":" + (final ? "true" : "false") + "}";
}

// Passes until SIGINT or SIGTERM, each reading what the agents appended
// since (final:false: a message still being written waits), then a final
// pass. The exit status is the final pass's.
int import_transcripts(const Args &args, const std::string &format) {
  const std::string &path = args.positional.at(0);
  bool follow = args.has("--follow");
  if (args.value("--interval") && !follow) throw UsageError("--interval needs --follow");
  double interval = 2.0;
  if (auto text = args.value("--interval")) {
    char *end = nullptr;
    interval = std::strtod(text->c_str(), &end);
    if (end == text->c_str() || *end || !(interval > 0) || interval > 86400)
      throw UsageError("--interval must be a number of seconds (0 < S <= 86400), not '" + *text +
                       "'");
  }
  auto db = open_db(args, Access::create);
  if (follow) {
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    while (!g_stop) {
      print_transcript_report(db.transcript_import(transcript_options(format, path, false)),
                              args.has("--json"));
      // Slept in short steps, so that a signal ends the wait soon.
      for (double slept = 0; slept < interval && !g_stop; slept += 0.05)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  std::string report = db.transcript_import(transcript_options(format, path, true));
  print_transcript_report(report, args.has("--json"));
  JsonDoc doc(report);
  return get_int(doc.root(), "failed") > 0 ? 1 : 0;
}

int cmd_import(const Args &args) {
  if (auto format = args.value("--from")) return import_transcripts(args, *format);
  if (args.has("--follow") || args.value("--interval") || args.has("--json"))
    throw UsageError("--follow, --interval and --json go with --from");
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
    {"sessions", "[--json]", "list sessions: id, agent, events, first and last time",
     "Prints one row per session, oldest first; times are UTC.\n"
     "\n"
     "  --json  print the sessions as a JSON array instead\n",
     {}, {"--json"}, 0, 0, cmd_sessions},
    {"session show", "SESSION [--json]", "print one session as JSON",
     "Prints the session object: id, agent_id, started_event_id, created_ts,\n"
     "last_ts, event_count, last_seq and meta (its SessionStarted payload).\n"
     "--json is accepted (the output is JSON either way).\n",
     {}, {"--json"}, 1, 1, cmd_session_show},
    {"append", "SESSION [--each]", "append NDJSON events from stdin to a session",
     "Reads events from stdin, one JSON object per line, each like\n"
     "  {\"type\": TYPE, \"actor\": ACTOR, \"payload\": {...}}\n"
     "and appends them in one transaction: all of them or, on any error,\n"
     "none (the error names the line). Prints the count and the last seq.\n"
     "\n"
     "  --each  append every line in its own transaction instead, as a live\n"
     "          host does; a bad line stops there, keeping those before it\n",
     {}, {"--each"}, 1, 1, cmd_append},
    {"record", "SESSION --format FORMAT [--stream] [--parent EVENT] [--branch BRANCH] [--json]",
     "record a provider's response from stdin as an assistant message",
     "Reads a provider's complete response from stdin (an OpenAI ChatCompletion,\n"
     "a Responses response, an Anthropic Message or a Gemini\n"
     "GenerateContentResponse) and appends the AssistantMessageCreated it\n"
     "means: text, tool calls, thinking, refusals, images, model, stop reason\n"
     "and usage. Recording the same response again changes nothing.\n"
     "\n"
     "  --format FORMAT  openai.chat, openai.responses, anthropic.messages or\n"
     "                   gemini.generate_content\n"
     "  --stream         stdin is the provider's stream events, one JSON object\n"
     "                   a line (SSE \"data: \" lines too)\n"
     "  --parent EVENT   the event it answers (default: the branch's leaf)\n"
     "  --branch BRANCH  append after this branch's leaf (default main)\n"
     "  --actor ACTOR    the event's actor (default assistant)\n"
     "  --latency-ms MS  how long the provider took\n"
     "  --json           print the stored event instead of its id and seq\n",
     {"--format", "--parent", "--branch", "--actor", "--latency-ms"}, {"--stream", "--json"}, 1, 1,
     cmd_record},
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
    {"tree", "SESSION [--json]", "draw a session's tree of branches",
     "Draws the session's branches, each indented under the branch it forked\n"
     "from: its id, kind and name, the event it forked from (seq), its own\n"
     "event count and its leaf (the event a new one on it would follow).\n"
     "\n"
     "  --json  print the branches as a JSON array instead\n",
     {}, {"--json"}, 1, 1, cmd_tree},
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
     "tool_result CALL STATUS [ARTIFACT] OUTPUT, summary), each cut to 100\n"
     "characters. A spilled output shows its preview and the artifact with\n"
     "the whole.\n"
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
    // ---- the context compiler ----
    {"context", "SESSION --budget N [--reserve N] [--branch BRANCH | --leaf EVENT]\n"
     "                         [--request TEXT] [--system TEXT | --system-file FILE]...\n"
     "                         [--json [--format FORMAT]] [--record] [--continue]",
     "show what the context compiler would give a model now",
     "Compiles the context of a branch for a model's next call and shows it\n"
     "like an agent's /context: the budget used per kind, then every segment\n"
     "in prompt order (priority, kind, tokens, id, why it is in and where it\n"
     "came from), what was left out and why, and what was redacted.\n"
     "\n"
     "  --budget N          the model's context window, in tokens (required;\n"
     "                      also --max-tokens, the API's name)\n"
     "  --reserve N         tokens kept free for the answer (default 0; also\n"
     "                      --reserved-output-tokens)\n"
     "  --branch BRANCH     the branch's id or a name unique in the session\n"
     "                      (default: main)\n"
     "  --leaf EVENT        compile as of this event (not with --branch)\n"
     "  --request TEXT      the current request, when it is not in the log\n"
     "  --model MODEL       the model the context is for: its calibration in\n"
     "                      `ctxdb stats` shrinks the budget when providers\n"
     "                      read more tokens than ctxdb counted\n"
     "  --system TEXT       a system instruction; repeatable, kept in order\n"
     "  --system-file FILE  a system instruction read from FILE (- is stdin)\n"
     "  --json              print the bundle as JSON instead\n"
     "  --format FORMAT     with --json: canonical (default), openai.chat,\n"
     "                      openai.responses, anthropic.messages,\n"
     "                      gemini.generate_content or ai.sdk\n"
     "  --record            append a ContextBuilt event recording the bundle\n"
     "  --continue          the model continues its own last answer: without it\n"
     "                      (or --request) a branch ending on the assistant's\n"
     "                      finished answer is refused\n",
     {"--budget", "--max-tokens", "--reserve", "--reserved-output-tokens", "--branch", "--leaf",
      "--request", "--model", "--system", "--system-file", "--format"},
     {"--json", "--record", "--continue"}, 1, 1, cmd_context},
    {"artifact ls", "[SESSION] [--json]", "list artifacts",
     "Lists every artifact, or those the events of SESSION refer to, oldest\n"
     "first: id, size in bytes, lines, kind and name.\n"
     "\n"
     "  --json  print the artifacts as a JSON array instead\n",
     {}, {"--json"}, 0, 1, cmd_artifact_ls},
    {"artifact show", "ID", "print an artifact's metadata as JSON",
     "Prints the artifact object: id, raw and stored sizes, chunks, lines,\n"
     "kind, mime, name, created_ts and the events that refer to it.\n",
     {}, {}, 1, 1, cmd_artifact_show},
    {"artifact cat", "ID [--offset N] [--length N]", "print an artifact's bytes",
     "Writes the content of the artifact to stdout, byte for byte: all of\n"
     "it, or LENGTH bytes from OFFSET (a length past the end stops there).\n"
     "\n"
     "  --offset N  the first byte (default 0)\n"
     "  --length N  how many bytes (default: to the end)\n",
     {"--offset", "--length"}, {}, 1, 1, cmd_artifact_cat},
    {"artifact lines", "ID FIRST [COUNT]", "print lines FIRST.. of an artifact",
     "Prints COUNT lines (default: to the end) from line FIRST (1-based).\n",
     {}, {}, 2, 3, cmd_artifact_lines},
    {"artifact head", "ID [-n LINES]", "print an artifact's first lines",
     "Prints the first LINES lines (default 10) of the artifact.\n",
     {"-n"}, {}, 1, 1, cmd_artifact_head},
    {"artifact tail", "ID [-n LINES]", "print an artifact's last lines",
     "Prints the last LINES lines (default 10) of the artifact.\n",
     {"-n"}, {}, 1, 1, cmd_artifact_tail},
    {"artifact grep", "ID PATTERN [-C N] [-m MAX] [-i] [--json]", "search an artifact",
     "Prints the lines of the artifact that match PATTERN (a PCRE2 regular\n"
     "expression, matched line by line) as 'LINE:text', context lines as\n"
     "'LINE-text', and '--' between groups that are not adjacent.\n"
     "\n"
     "  -C N    N lines of context before and after each match\n"
     "  -m MAX  stop after MAX matching lines (default 100)\n"
     "  -i      ignore case\n"
     "  --json  print the search result as JSON instead\n",
     {"-C", "-m"}, {"-i", "--json"}, 2, 2, cmd_artifact_grep},
    {"artifact put", "FILE [--kind KIND] [--mime MIME] [--name NAME] [--json]",
     "store a file (or - for stdin) as an artifact",
     "Stores the bytes of FILE as an artifact and prints its id (art_ and the\n"
     "SHA-256 of the bytes; the same bytes are stored once). The file is\n"
     "streamed a block at a time, so its size is not bounded by memory;\n"
     "nothing is stored unless all of it was read.\n"
     "\n"
     "  --kind KIND  file, diff, tool_output, command_log, image, dataset,\n"
     "               url_snapshot or other (default)\n"
     "  --mime MIME  its media type\n"
     "  --name NAME  its name (default: FILE)\n"
     "  --json       print the stored artifact as JSON instead\n",
     {"--kind", "--mime", "--name"}, {"--json"}, 1, 1, cmd_artifact_put},
    {"artifact export", "ID FILE", "write an artifact's bytes to FILE (- for stdout)",
     "Writes the whole content of the artifact to FILE, replacing it.\n",
     {}, {}, 2, 2, cmd_artifact_export},
    {"search", "QUERY [--session S] [--branch B] [--role R] [--type T] [--since MS] "
               "[--until MS] [--limit N] [--sensitive] [--json]",
     "search the messages of every session",
     "Searches prompts, assistant text and tool calls, tool outputs (a spilled\n"
     "output by its preview) and compaction and branch summaries for the\n"
     "words of QUERY, each\n"
     "required: whole words first (best first), then substrings, so pieces of\n"
     "paths and identifiers, Chinese and Japanese are found. Quotes, OR, NOT\n"
     "and prefix* are FTS5 syntax when the query parses as such; anything\n"
     "else is plain words. Prints 'SESSION #SEQ ROLE  snippet', the match\n"
     "between « and ».\n"
     "\n"
     "  --session S  only session S\n"
     "  --branch B   only the path of branch B (an id, or a name with --session)\n"
     "  --role R     user, assistant, tool or summary\n"
     "  --type T     only events of type T\n"
     "  --since MS   only events at or after MS (ms since the Unix epoch)\n"
     "  --until MS   only events at or before MS\n"
     "  --limit N    at most N hits (default 20, at most 1000)\n"
     "  --sensitive  also events whose visibility is sensitive, private or\n"
     "               secret (left out otherwise, as a compiled bundle\n"
     "               withholds them)\n"
     "  --json       print the search result as JSON instead\n",
     {"--session", "--branch", "--role", "--type", "--since", "--until", "--limit"},
     {"--sensitive", "--json"}, 1, 1, cmd_search},
    // --- memory (memory_commands.cpp) ---
    {"memory put", "--scope S [--scope-id ID] [--kind K] --source REF... [--ttl D | --expires T | "
     "--update-policy P] [--sensitive] TEXT", "write a memory",
     "Writes TEXT as a memory (a MemoryWritten event) and prints its id.\n"
     "\n"
     "  --scope S          global, user, org, workspace, project or session\n"
     "  --scope-id ID      the user, org, ... it belongs to (all but global)\n"
     "  --kind K           preference, fact (default), instruction, skill,\n"
     "                     artifact_summary or decision\n"
     "  --source REF       an event, message or artifact id it comes from\n"
     "                     (required; repeat or separate with commas)\n"
     "  --ttl D            expires D after now: 90s, 30m, 12h, 7d (or ms)\n"
     "  --expires T        expires at T: ms since the epoch or YYYY-MM-DD[THH:MM[:SS]][Z]\n"
     "  --update-policy P  kept current by P instead of expiring\n"
     "                     (one of the three is required for every scope but session)\n"
     "  --sensitive        retrieved only when the caller allows sensitive memories\n"
     "  --confidence X     0..1 (default 1)\n"
     "  --priority N       0..100 (default 50)\n"
     "  --keyword K        a keyword (repeat or separate with commas)\n"
     "  --reader A         an agent allowed to read it (repeat or separate with\n"
     "                     commas; default all)\n"
     "  --session S        the session to append to (default: the first source's)\n"
     "  --id ID            the memory id (default: a new mem_ id)\n"
     "  --json             print the memory as JSON instead\n",
     {"--scope", "--scope-id", "--kind", "--source", "--ttl", "--expires", "--update-policy",
      "--confidence", "--priority", "--keyword", "--reader", "--session", "--id"},
     {"--sensitive", "--json"}, 1, 1, cmd_memory_put},
    {"memory update", "ID --source REF... [TEXT] [flags of put]", "supersede a memory",
     "Writes a new version of memory ID (a MemoryUpdated event); the old one\n"
     "stays, no longer valid. Flags as for 'memory put' (not --scope).\n",
     {"--kind", "--source", "--ttl", "--expires", "--update-policy", "--confidence", "--priority",
      "--keyword", "--reader", "--session"},
     {"--sensitive", "--json"}, 1, 2, cmd_memory_update},
    {"memory ls",
     "[--scope S] [--scope-id ID] [--all-versions] [--as-of T] [--limit N] [--json]",
     "list memories",
     "Lists the current memories: id, version, scope, kind, content.\n"
     "\n"
     "  --all-versions  every version, superseded and forgotten ones included\n"
     "  --as-of T       the versions valid at T (ms or an ISO date): what was\n"
     "                  believed then\n"
     "  --limit N       at most N (default: every one)\n"
     "  --json          print the memories as a JSON array instead\n",
     {"--scope", "--scope-id", "--kind", "--as-of", "--limit"}, {"--all-versions", "--json"}, 0, 0,
     cmd_memory_ls},
    {"memory show", "ID", "print a memory as JSON",
     "Prints the memory's current version (or its last, once forgotten)\n"
     "with its use count.\n",
     {}, {}, 1, 1, cmd_memory_show},
    {"memory search", "QUERY [--scope S[:ID]]... [--agent A] [--budget N] [--json]",
     "search memories as retrieval would",
     "Runs retrieval: FTS5 over content and keywords, filtered and ranked\n"
     "(score = 0.55 text + 0.15 priority + 0.15 confidence + 0.15 recency).\n"
     "QUERY is plain words (any of them; --all: every one). Does not count as\n"
     "a use.\n"
     "\n"
     "  --scope S[:ID]  a scope to read, e.g. project:p1 (repeatable; default:\n"
     "                  every scope that has memories)\n"
     "  --agent A       the reading agent (default: none; memories with\n"
     "                  readers are then left out)\n"
     "  --budget N      fit the results to N tokens\n"
     "  --limit N       at most N memories (default 20)\n"
     "  --now T         judge expiry at T (ms or an ISO date; default now)\n"
     "  --sensitive     include sensitive memories\n"
     "  --all           every word of QUERY is required\n"
     "  --fts           QUERY is FTS5 syntax (plain words when it is not valid)\n"
     "  --json          print the retrieval as JSON instead\n",
     {"--scope", "--agent", "--budget", "--limit", "--now"},
     {"--sensitive", "--all", "--fts", "--json"},
     1, 1, cmd_memory_search},
    {"memory forget", "ID [--purge] [--reason R]", "forget a memory",
     "Ends the memory and removes its content from the projection and the\n"
     "search index (the events stay). With --purge, the content is removed\n"
     "from the log as well; verify stays green and lists the removed payloads.\n",
     {"--reason"}, {"--purge"}, 1, 1, cmd_memory_forget},
    {"memory promote", "SESSION FILE", "write memory candidates (FILE, or - for stdin)",
     "Writes a JSON array of memory candidates (e.g. a compaction plan's) in\n"
     "one transaction, all or none, and prints their ids.\n",
     {}, {"--json"}, 2, 2, cmd_memory_promote},
    {"verify", "[SESSION] [--artifacts MODE] [--anchor FILE] [--json]",
     "check the hash chain, the artifacts, an anchor",
     "Recomputes the hash chain of one session, or of every session, and\n"
     "for every session checks the artifacts too. Prints \"ok: N sessions,\n"
     "M events\" and a line per other check and exits 0, or prints the first\n"
     "broken event, chunk or anchor mismatch and exits 1.\n"
     "\n"
     "  --artifacts MODE  none, quick (the default for every session: every\n"
     "                    stored chunk re-hashed, every artifact's chunk list\n"
     "                    checked) or full (also every artifact's whole content\n"
     "                    decompressed and re-hashed against its id)\n"
     "  --anchor FILE     an anchor 'ctxdb anchor' printed earlier (- for\n"
     "                    stdin): fail unless the file still extends it\n"
     "  --json            print the report as JSON instead\n",
     {"--artifacts", "--anchor"}, {"--json"}, 0, 1, cmd_verify},
    {"anchor", "", "print a digest of the whole history to keep elsewhere",
     "Prints, as JSON, a small digest of the file's whole history, in the\n"
     "manner of a transparency log's signed tree head: the number of events,\n"
     "an RFC 6962 Merkle root over their hashes in append order, and each\n"
     "session's last event. Keep it outside the file (another machine, a\n"
     "signed note); 'ctxdb verify --anchor FILE' later proves the file still\n"
     "extends it: no event deleted, changed or moved in the append order, no\n"
     "session deleted, no commit lost with a -wal file.\n",
     {}, {}, 0, 0, cmd_anchor},
    {"rebuild", "[--check] [--search]", "replay the log into every derived table",
     "Clears every derived table (sessions, ...) and replays the whole log\n"
     "into them in one transaction, printing each table's row count and\n"
     "whether it came out as it was. The log itself is never touched. The\n"
     "session-search index indexes the stored events alone: it is brought\n"
     "up to date and kept, unless --search asks for it to be re-derived.\n"
     "\n"
     "  --check   fail (exit 1, nothing changed) when any rebuilt table differs\n"
     "            from the stored one, or a stored artifact chunk does not\n"
     "            match its SHA-256 (as 'verify --artifacts quick')\n"
     "  --search  clear the session-search index and index the log again too\n",
     {}, {"--check", "--search"}, 0, 0, cmd_rebuild},
    {"optimize", "[--json]", "merge the full-text indexes into one segment each",
     "Merges the memories' index (memory_fts) and the session-search indexes\n"
     "(search_words, search_grams) into one segment each, in one\n"
     "transaction, and prints how many segments each had. FTS5 keeps an index\n"
     "in a segment per writing transaction, merged only partly as it goes,\n"
     "and a query reads every segment: after a bulk load of memories,\n"
     "retrieval is faster merged. It rewrites every page of the indexes, so\n"
     "run it after bulk loads or as periodic maintenance. What the indexes\n"
     "hold does not change.\n"
     "\n"
     "  --json  print the report as JSON instead\n",
     {}, {"--json"}, 0, 0, cmd_optimize},
    {"export", "[SESSION] [--events-only] [--no-verify]",
     "print stored events and their artifacts as NDJSON",
     "Prints every stored event, one JSON object per line: the whole\n"
     "database in append order, or one session in seq order; then the\n"
     "artifacts those events refer to (all of them for the whole database),\n"
     "each as an {\"ctxdb_record\":\"artifact\",...} line and its chunks (the\n"
     "stored bytes in base64, with their SHA-256). The output is what\n"
     "'ctxdb import' takes; ids, seqs and hashes are kept, and the artifacts\n"
     "are checked against their hashes on the way in.\n"
     "\n"
     "The chains it exports are verified first (as 'ctxdb verify [SESSION]'):\n"
     "when one is broken, it prints nothing and exits 1 with the first broken\n"
     "event (CTXDB_CORRUPT).\n"
     "\n"
     "  --events-only  the events alone\n"
     "  --no-verify    export what is stored without verifying it (to salvage\n"
     "                 a damaged file; 'ctxdb import' rejects a broken chain)\n",
     {}, {"--events-only", "--no-verify"}, 0, 1, cmd_export},
    {"import", "FILE | --from claude-code|codex|pi PATH [--follow [--interval S]] [--json]",
     "import an export, or another agent's session files",
     "Imports NDJSON written by 'ctxdb export' in one transaction. Events\n"
     "already present with identical content are skipped; a hash or seq that\n"
     "does not match is an error naming the line. Artifacts are stored (or\n"
     "only their references, when the bytes are there already); a chunk or\n"
     "content that fails its hash is CTXDB_CORRUPT and nothing is imported.\n"
     "FILE may be - for stdin.\n"
     "\n"
     "With --from, PATH is another agent's session file, or its folder:\n"
     "~/.claude (Claude Code), ~/.codex (Codex), ~/.pi/agent (Pi), or any\n"
     "folder below. Each session file is imported in one transaction, and\n"
     "incrementally: importing again changes nothing, a file that grew adds\n"
     "its new records, a file changed in its middle is reported and not\n"
     "merged, and a malformed line fails its file (naming file and line)\n"
     "while the others go on. Prints each file imported, changed or failed,\n"
     "then the counts; exits 1 when a file failed.\n"
     "\n"
     "  --from F      the agent that wrote PATH: claude-code, codex or pi\n"
     "  --follow      keep importing what the agents append (a message still\n"
     "                being written waits), a pass every --interval seconds,\n"
     "                until SIGINT or SIGTERM, then a final pass\n"
     "  --interval S  seconds between passes (default 2)\n"
     "  --json        print each pass's report as JSON instead\n",
     {"--from", "--interval"}, {"--follow", "--json"}, 1, 1, cmd_import},
    // ---- Tokenizer
    {"tokens", "[FILE|-] [--encoding E] [--specials MODE] [--ids]",
     "count the tokens of a file (or stdin) exactly",
     "Prints the number of tokens of FILE (default: stdin) in an encoding,\n"
     "identical to tiktoken's. No database and no configuration are needed:\n"
     "the library carries the standard rank files (o200k_base.tiktoken,\n"
     "cl100k_base.tiktoken). $CTXDB_TOKENIZER_DATA, or the tokenizer_data_dir\n"
     "of the database given with --db, names a directory of them to use\n"
     "instead. The text must be UTF-8.\n"
     "\n"
     "  --encoding E    o200k_base (default) or cl100k_base\n"
     "  --specials MODE what the text of a special token (<|endoftext|>) is:\n"
     "                  disallow (default; an error naming it), allow (its\n"
     "                  special id) or text (ordinary text)\n"
     "  --ids           print the token ids as a JSON array instead\n",
     {"--encoding", "--specials"}, {"--ids"}, 0, 1, cmd_tokens},
    // ---- Compaction ----
    {"compact", "SESSION [--branch B] [--keep-recent N] [--transcript-max N] "
                "[--summary-file F | --builtin] [--dry-run] [--json]",
     "compact a branch: summarize what precedes its recent turns",
     "Plans a compaction of the branch (default: main), summarizes the range\n"
     "before the cut and commits it as one CompactionCompleted event; the raw\n"
     "events stay. --keep-recent N keeps the recent whole turns up to N tokens\n"
     "(default 20000). --transcript-max N caps the transcript a summarizer\n"
     "reads at N tokens (default: what the window leaves), leaving out the\n"
     "middle of a larger range. --builtin (the default) uses the built-in extractive\n"
     "summarizer; --summary-file F checks and commits the summary JSON in F\n"
     "(- for stdin) instead. A summary that fails a check is not committed: a\n"
     "CompactionFailed event records why, and the failed checks are named.\n"
     "--dry-run prints the plan (the cut, the sizes, the obligations) and\n"
     "writes nothing; with --json, the whole plan including the transcript.\n",
     {"--branch", "--keep-recent", "--transcript-max", "--summary-file"},
     {"--builtin", "--dry-run", "--json"}, 1, 1, cmd_compact},
    {"compactions", "SESSION [--branch B] [--json]", "list the compactions of a branch",
     "Lists the compactions on the branch's path (default: main), oldest first:\n"
     "the range each summarizes, tokens before and after, the ratio, the checks\n"
     "passed and the summarizer.\n",
     {"--branch"}, {"--json"}, 1, 1, cmd_compactions},
    {"branch-summary", "SESSION FROM_LEAF TO_EVENT [--json]",
     "summarize an abandoned path and append it where work continues",
     "Summarizes the path abandoned at FROM_LEAF since its common ancestor with\n"
     "TO_EVENT (the built-in extractive summarizer) and appends the summary at\n"
     "TO_EVENT as a BranchSummarized event -- on a new fork when TO_EVENT is not\n"
     "a leaf -- so the branch that continues there knows what was tried.\n",
     {}, {"--json"}, 3, 3, cmd_branch_summary},
};
// clang-format on

} // namespace

std::span<const CommandSpec> commands() { return kCommands; }

} // namespace cli
