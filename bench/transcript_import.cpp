// bench_transcript_import: ctxdb_transcript_import of a long session file
// of each agent it reads (Claude Code, Codex, Pi) against
// ctxdb_append_batch of the same events already converted, side by side
// in one run, and the peak memory of an import at two file sizes. The
// goal: reading another agent's file costs at most twice the append of
// what it means (import ≥ 0.5 of append's MB/s), in every format.
//
// Each transcript is generated in its agent's on-disk shape, turn after
// turn up to --mb megabytes; every turn says the same things in the three
// (a prompt, thinking, a short preamble, a shell call, its 12-line
// result, an answer), so the files differ in their shape alone:
//   - Claude Code: one API message over several lines (thinking, text,
//     the tool_use), each line with Claude's per-record fields; the result
//     with its toolUseResult; a turn_duration line;
//   - Codex: a session_meta with base instructions, the developer,
//     AGENTS.md and environment context messages, then per turn a
//     turn_context, the response items (message, reasoning with
//     encrypted_content, function_call and its output) and the event_msg
//     echoes (user_message, agent_reasoning, agent_message) and
//     token_count lines Codex writes around them;
//   - Pi: a header, model and thinking-level changes, then entries of an
//     id/parentId chain (the assistant's thinking, text and tool call in
//     one message, its toolResult, the answer).
// The baseline is the events a first import stored, read back and given
// to ctxdb_append_batch as NDJSON (type, actor, id, parent_id, ts,
// payload): the same rows, without the reading. Each side, each round: a
// fresh file (durability "normal"), one call (one transaction), close;
// rounds rotate the sides' order; medians. Both rates are MB of
// transcript per second.
//
// Peak memory: the import of a file of --mb and of 4×--mb, each in a
// child process of its own (this program re-run with --child, so nothing
// of the parent's is counted), its VmHWM; beside it, the same measure of
// the append_batch of the events the file converts to.
//
// usage: bench_transcript_import [--mb N (12)] [--rounds R (5)]
//                                [--format claude-code|codex|pi (all three)]
#include "bench_util.hpp"

#include "json/json_writer.hpp"

#include <ctxdb/ctxdb.h>
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#ifndef CTXDB_BENCH_BUILD_TYPE
#define CTXDB_BENCH_BUILD_TYPE ""
#endif

namespace fs = std::filesystem;
using bench::call;
using bench::check;
using bench::Clock;
using bench::median;

namespace {

const char *kConfig = R"({"durability":"normal"})";
const int64_t kStartMs = 1772359200000; // 2026-03-01T10:00:00Z

std::string words(size_t i, size_t n) {
  static const char *w[] = {"the", "build", "fails", "in",  "module", "parser", "because",
                            "a",   "token", "is",    "not", "closed", "so",     "we"};
  std::string s;
  for (size_t k = 0; k < n; ++k) s += std::string(k ? " " : "") + w[(i + k * 5) % 14];
  return s;
}

std::string iso(int64_t ms) {
  std::time_t s = ms / 1000;
  std::tm tm{};
  gmtime_r(&s, &tm);
  char b[64];
  std::snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
  return b;
}

// A UUID-shaped id, the n-th of its kind.
std::string uuid(unsigned kind, size_t n) {
  char b[40];
  std::snprintf(b, sizeof b, "%08x-0000-4000-8000-%012zx", kind, n);
  return b;
}

// A JSON string's contents (already escaped) escaped once more, to sit
// in a JSON string inside a JSON string (Codex's arguments and outputs).
std::string escape_again(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

// What turn t says, the same in every format (JSON-escaped text).
struct Turn {
  std::string n, prompt, thinking, preamble, command, output, answer, signature;
};

Turn turn(size_t t) {
  Turn x;
  x.n = std::to_string(t);
  x.prompt = words(t, 40);
  x.thinking = words(t + 1, 40);
  x.preamble = words(t + 3, 16);
  x.command = "make test " + x.n;
  for (int l = 0; l < 12; ++l) x.output += words(t + l, 14) + "\\n";
  x.answer = words(t + 5, 90);
  // A thinking signature / encrypted reasoning blob: opaque, ~200 bytes.
  x.signature = "EqQBCkYIBxgCKkA" + std::string(160, char('A' + t % 26)) + x.n + "==";
  return x;
}

// A Claude Code session file of about `bytes`: per turn the prompt, one
// API message over three lines (thinking, text, tool_use), its result,
// the answer and the turn's duration.
std::string claude_code_transcript(size_t bytes, const std::string &session) {
  std::string s, parent = "null";
  int64_t ms = kStartMs;
  size_t records = 0;
  auto record = [&](const char *type, const std::string &rest) {
    std::string id = uuid(0xcc, ++records);
    s += R"({"parentUuid":)" + parent +
         R"(,"isSidechain":false,"userType":"external","cwd":"/home/dev/shop","sessionId":")" +
         session + R"(","version":"2.1.81","gitBranch":"main","type":")" + type + R"(","uuid":")" +
         id + R"(","timestamp":")" + iso(ms += 700) + "\"," + rest + "}\n";
    parent = "\"" + id + "\"";
    return id;
  };
  auto assistant = [&](const std::string &msg, const std::string &block, const char *stop,
                       int output_tokens) {
    return record(
        "assistant",
        R"("message":{"id":")" + msg +
            R"(","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[)" +
            block + R"(],"stop_reason":)" + stop +
            R"(,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":4000,"output_tokens":)" +
            std::to_string(output_tokens) + R"(,"service_tier":"standard"}},"requestId":"req_)" +
            msg + "\"");
  };
  for (size_t t = 0; s.size() < bytes; ++t) {
    Turn x = turn(t);
    record("user", R"("message":{"role":"user","content":")" + x.prompt + "\"}");
    std::string msg = "msg_" + x.n + "a";
    assistant(msg,
              R"({"type":"thinking","thinking":")" + x.thinking + R"(","signature":")" +
                  x.signature + "\"}",
              "null", 3);
    assistant(msg, R"({"type":"text","text":")" + x.preamble + "\"}", "null", 20);
    std::string call = assistant(msg,
                                 R"({"type":"tool_use","id":"toolu_)" + x.n +
                                     R"(","name":"Bash","input":{"command":")" + x.command +
                                     R"(","description":"Run the tests"}})",
                                 "\"tool_use\"", 80);
    record("user",
           R"("message":{"role":"user","content":[{"tool_use_id":"toolu_)" + x.n +
               R"(","type":"tool_result","content":")" + x.output +
               R"(","is_error":false}]},"toolUseResult":{"stdout":")" + x.output +
               R"(","stderr":"","interrupted":false,"isImage":false},"sourceToolAssistantUUID":")" +
               call + "\"");
    assistant("msg_" + x.n + "b", R"({"type":"text","text":")" + x.answer + "\"}", "\"end_turn\"",
              120);
    record("system", R"("subtype":"turn_duration","durationMs":)" + std::to_string(4000 + t % 997) +
                         R"(,"isMeta":false)");
  }
  return s;
}

// A Codex rollout of about `bytes`: the session's meta and injected
// context, then per turn its turn_context, response items, event_msg
// echoes and token counts.
std::string codex_transcript(size_t bytes, const std::string &session) {
  std::string s;
  int64_t ms = kStartMs;
  auto line = [&](const char *type, const std::string &payload) {
    s += R"({"timestamp":")" + iso(ms += 350) + R"(","type":")" + type + R"(","payload":)" +
         payload + "}\n";
  };
  auto item = [&](const std::string &payload) { line("response_item", payload); };
  auto event = [&](const std::string &payload) { line("event_msg", payload); };
  auto message = [&](const char *role, const char *kind, const std::string &text) {
    item(std::string(R"({"type":"message","role":")") + role + R"(","content":[{"type":")" + kind +
         R"(","text":")" + text + "\"}]}");
  };
  int64_t total_in = 0, total_out = 0;
  auto token_count = [&](int64_t in, int64_t out) {
    total_in += in;
    total_out += out;
    auto usage = [](int64_t i, int64_t o) {
      return R"({"input_tokens":)" + std::to_string(i) + R"(,"cached_input_tokens":)" +
             std::to_string(i * 3 / 4) + R"(,"output_tokens":)" + std::to_string(o) +
             R"(,"reasoning_output_tokens":)" + std::to_string(o / 2) + R"(,"total_tokens":)" +
             std::to_string(i + o) + "}";
    };
    event(
        R"({"type":"token_count","info":{"total_token_usage":)" + usage(total_in, total_out) +
        R"(,"last_token_usage":)" + usage(in, out) +
        R"(,"model_context_window":272000},"rate_limits":{"primary":{"used_percent":4.0,"window_minutes":300},"secondary":null}})");
  };
  line(
      "session_meta",
      R"({"id":")" + session + R"(","timestamp":")" + iso(kStartMs) +
          R"(","cwd":"/home/dev/shop","originator":"codex_cli_rs","cli_version":"0.60.0","source":"cli","model_provider":"openai","base_instructions":{"text":"You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user's computer."},"git":{"commit_hash":"3f2a9c1d","branch":"main"}})");
  message("developer", "input_text",
          "<permissions instructions>\\nThe sandbox is workspace-write.\\n</permissions "
          "instructions>");
  message("user", "input_text",
          "# AGENTS.md instructions for /home/dev/shop\\n\\n<INSTRUCTIONS>\\nRun the tests "
          "before you say a change is done.\\n</INSTRUCTIONS>");
  message("user", "input_text",
          "<environment_context>\\n  <cwd>/home/dev/shop</cwd>\\n  "
          "<approval_policy>on-request</approval_policy>\\n  <shell>bash</shell>\\n</"
          "environment_context>");
  for (size_t t = 0; s.size() < bytes; ++t) {
    Turn x = turn(t);
    line(
        "turn_context",
        R"({"cwd":"/home/dev/shop","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write","network_access":false},"model":"gpt-5-codex","effort":"medium","summary":"auto"})");
    message("user", "input_text", x.prompt);
    event(R"({"type":"user_message","message":")" + x.prompt + R"(","kind":"plain"})");
    event(R"({"type":"agent_reasoning","text":")" + x.thinking + "\"}");
    item(R"({"type":"reasoning","summary":[{"type":"summary_text","text":")" + x.thinking +
         R"("}],"content":null,"encrypted_content":"gAAAAB)" + x.signature + "\"}");
    message("assistant", "output_text", x.preamble);
    event(R"({"type":"agent_message","message":")" + x.preamble + "\"}");
    item(
        R"({"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\")" +
        x.command + R"(\"],\"workdir\":\"/home/dev/shop\"}","call_id":"call_)" + x.n + "\"}");
    token_count(1200, 80);
    item(R"({"type":"function_call_output","call_id":"call_)" + x.n +
         R"(","output":"{\"output\":\")" + escape_again(x.output) +
         R"(\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":1.2}}"})");
    message("assistant", "output_text", x.answer);
    event(R"({"type":"agent_message","message":")" + x.answer + "\"}");
    token_count(1400, 120);
  }
  return s;
}

// A Pi session file of about `bytes`: a header, the model and thinking
// level, then per turn a prompt, an assistant message (thinking, text, a
// tool call), its tool result and the answer, each entry the child of the
// one before.
std::string pi_transcript(size_t bytes, const std::string &session) {
  int64_t ms = kStartMs;
  std::string s = R"({"type":"session","version":3,"id":")" + session + R"(","timestamp":")" +
                  iso(ms) + R"(","cwd":"/home/dev/shop"})" + "\n";
  std::string parent = "null";
  size_t entries = 0;
  auto entry = [&](const char *type, const std::string &rest) {
    char id[16];
    std::snprintf(id, sizeof id, "e%08zx", ++entries);
    s += std::string(R"({"type":")") + type + R"(","id":")" + id + R"(","parentId":)" + parent +
         R"(,"timestamp":")" + iso(ms += 700) + "\"," + rest + "}\n";
    parent = std::string("\"") + id + "\"";
  };
  auto message = [&](const std::string &body) {
    entry("message", R"("message":{)" + body + R"(,"timestamp":)" + std::to_string(ms) + "}");
  };
  auto assistant = [&](const std::string &content, int64_t in, int64_t out, const char *stop) {
    message(
        R"("role":"assistant","content":[)" + content +
        R"(],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":)" +
        std::to_string(in) + R"(,"output":)" + std::to_string(out) +
        R"(,"cacheRead":0,"cacheWrite":0,"totalTokens":)" + std::to_string(in + out) +
        R"(},"stopReason":")" + stop + "\"");
  };
  entry("model_change", R"("provider":"anthropic","modelId":"claude-sonnet-4-5")");
  entry("thinking_level_change", R"("thinkingLevel":"medium")");
  for (size_t t = 0; s.size() < bytes; ++t) {
    Turn x = turn(t);
    message(R"("role":"user","content":")" + x.prompt + "\"");
    assistant(R"({"type":"thinking","thinking":")" + x.thinking + R"(","thinkingSignature":")" +
                  x.signature + R"("},{"type":"text","text":")" + x.preamble +
                  R"("},{"type":"toolCall","id":"toolu_)" + x.n +
                  R"(","name":"bash","arguments":{"command":")" + x.command + "\"}}",
              1200, 80, "toolUse");
    message(R"("role":"toolResult","toolCallId":"toolu_)" + x.n +
            R"(","toolName":"bash","content":[{"type":"text","text":")" + x.output +
            R"("}],"isError":false)");
    assistant(R"({"type":"text","text":")" + x.answer + "\"}", 1400, 120, "stop");
  }
  return s;
}

// A format the importer reads: its generator, and the file name its
// agent would give the session (the Claude Code and Codex readers take
// the session's id from it).
struct Format {
  const char *name, *label;
  std::string (*generate)(size_t bytes, const std::string &session);
  std::string session, file_name;
};

const Format kFormats[] = {
    {"claude-code", "Claude Code", claude_code_transcript, uuid(0x5e55, 1),
     uuid(0x5e55, 1) + ".jsonl"},
    {"codex", "Codex", codex_transcript, uuid(0x5e55, 2),
     "rollout-2026-03-01T10-00-00-" + uuid(0x5e55, 2) + ".jsonl"},
    {"pi", "Pi", pi_transcript, uuid(0x5e55, 3),
     "2026-03-01T10-00-00-000Z_" + uuid(0x5e55, 3) + ".jsonl"},
};

const Format &format_named(const char *name) {
  for (const Format &f : kFormats)
    if (std::strcmp(f.name, name) == 0) return f;
  throw std::runtime_error(std::string("no format ") + name + " (claude-code, codex, pi)");
}

std::string import_options(const char *format, const std::string &file) {
  return std::string(R"({"format":")") + format + R"(","path":")" + file + R"("})";
}

ctxdb_db *open_fresh(const std::string &path, const char *config = kConfig) {
  for (const char *suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  ctxdb_db *db = nullptr;
  check(ctxdb_open(path.c_str(), config, std::strlen(config), &db), nullptr, "open");
  return db;
}

// The events an import stored, as a host would append them.
struct Converted {
  std::string session_create, session_id, ndjson;
  size_t events = 0;
};

Converted convert(const std::string &dir, const char *format, const std::string &file) {
  std::string path = dir + "/convert.ctxdb";
  ctxdb_db *db = open_fresh(path);
  std::string opts = import_options(format, file);
  char *out = nullptr;
  size_t n = 0;
  call(ctxdb_transcript_import(db, opts.data(), opts.size(), &out, &n), db, &out, "import");
  ctxdb_iter *it = nullptr;
  check(ctxdb_events_iter(db, nullptr, 0, 1, -1, &it), db, "events");
  Converted c;
  simdjson::dom::parser parser;
  const char *row;
  size_t len;
  while (ctxdb_iter_next(it, &row, &len) == CTXDB_ROW) {
    simdjson::dom::element e = parser.parse(row, len);
    ctxdb::json::JsonWriter w(len);
    w.begin_object();
    if (c.session_id.empty()) { // SessionStarted: the session_create request
      c.session_id = std::string(e["session_id"].get_string().value());
      w.field("id", c.session_id).field("event_id", e["id"].get_string().value());
    } else {
      w.field("type", e["type"].get_string().value()).field("id", e["id"].get_string().value());
      if (std::string_view p; !e["parent_id"].get(p)) w.field("parent_id", p);
    }
    w.field("actor", e["actor"].get_string().value()).field("ts", e["ts"].get_int64().value());
    w.key("payload").element(e["payload"]).end_object();
    if (c.session_create.empty())
      c.session_create = w.take();
    else
      c.ndjson += w.take() + "\n";
    ++c.events;
  }
  ctxdb_iter_free(it);
  ctxdb_close(db);
  return c;
}

double time_import(const std::string &db_path, const char *format, const std::string &file) {
  ctxdb_db *db = open_fresh(db_path);
  std::string opts = import_options(format, file);
  char *out = nullptr;
  size_t n = 0;
  Clock::time_point t0 = Clock::now();
  std::string report =
      call(ctxdb_transcript_import(db, opts.data(), opts.size(), &out, &n), db, &out, "import");
  check(ctxdb_close(db), nullptr, "close");
  double s = bench::seconds_since(t0);
  if (report.find("\"imported\":1") == std::string::npos)
    throw std::runtime_error("the import did not import: " + report);
  return s;
}

double time_append(const std::string &db_path, const Converted &c) {
  ctxdb_db *db = open_fresh(db_path);
  char *out = nullptr;
  size_t n = 0;
  Clock::time_point t0 = Clock::now();
  call(ctxdb_session_create(db, c.session_create.data(), c.session_create.size(), &out, &n), db,
       &out, "session_create");
  call(ctxdb_append_batch(db, c.session_id.data(), c.session_id.size(), c.ndjson.data(),
                          c.ndjson.size(), &out, &n),
       db, &out, "append_batch");
  check(ctxdb_close(db), nullptr, "close");
  return bench::seconds_since(t0);
}

std::string read_file(const char *path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// This process's peak RSS (KiB), from /proc/self/status.
long vm_hwm_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("VmHWM:")) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

// --child FORMAT DB FILE import|append: in a process of its own, the
// import of a session file, or the append of what it converts to (FILE:
// the session id, the session_create JSON, then the events as NDJSON).
int child(const char *format, const char *db_path, const char *file, const char *what) {
  ctxdb_db *db = open_fresh(db_path);
  char *out = nullptr;
  size_t n = 0;
  if (std::strcmp(what, "import") == 0) {
    std::string opts = import_options(format, file);
    call(ctxdb_transcript_import(db, opts.data(), opts.size(), &out, &n), db, &out, "import");
  } else {
    std::string text = read_file(file);
    size_t a = text.find('\n'), b = text.find('\n', a + 1);
    std::string_view all(text), sid = all.substr(0, a), create = all.substr(a + 1, b - a - 1);
    call(ctxdb_session_create(db, create.data(), create.size(), &out, &n), db, &out, "create");
    std::string_view events = all.substr(b + 1);
    call(ctxdb_append_batch(db, sid.data(), sid.size(), events.data(), events.size(), &out, &n), db,
         &out, "append_batch");
  }
  if (ctxdb_close(db) != CTXDB_OK) return 1;
  std::printf("%ld\n", vm_hwm_kib());
  return 0;
}

// The peak RSS (KiB) of a child doing `what`: its VmHWM, read by the
// child itself at its end. (wait4's ru_maxrss would not do: it keeps the
// RSS the process had before its exec, the parent's at the fork.)
long peak_kib(const char *self, const char *format, const std::string &db_path,
              const std::string &file, const char *what) {
  std::string command =
      std::string("'") + self + "' --child " + format + " '" + db_path + "' '" + file + "' " + what;
  std::FILE *p = popen(command.c_str(), "r");
  long kib = -1;
  if (!p || std::fscanf(p, "%ld", &kib) != 1) kib = -1;
  if (!p || pclose(p) != 0 || kib < 0)
    throw std::runtime_error(std::string("the ") + what + " child failed");
  return kib;
}

void write_file(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

// One format's figures.
struct Result {
  double file_mb = 0, ndjson_mb = 0, import_rate = 0, append_rate = 0, import_s = 0, append_s = 0;
  size_t events = 0;
  double sizes[2] = {};
  long kib[2][2] = {}; // [size][0: import, 1: append of the same events]
};

// A session file of about `mb` in `f`'s format, written where its agent
// would keep it under dir/<subdir>.
std::string write_session(const Format &f, const std::string &dir, const char *subdir, size_t mb,
                          double &file_mb) {
  fs::create_directories(dir + "/" + subdir);
  std::string path = dir + "/" + subdir + "/" + f.file_name;
  std::string text = f.generate(mb << 20, f.session);
  write_file(path, text);
  file_mb = double(text.size()) / (1 << 20);
  return path;
}

Result run(const Format &f, const std::string &dir, size_t mb, int rounds, const char *self) {
  Result r;
  std::string file = write_session(f, dir, "small", mb, r.sizes[0]);
  r.file_mb = r.sizes[0];
  Converted c = convert(dir, f.name, file);
  r.events = c.events;
  r.ndjson_mb = double(c.ndjson.size() + c.session_create.size()) / (1 << 20);
  std::vector<double> import_s, append_s;
  for (int k = 0; k < rounds; ++k) {
    std::string db = dir + "/round.ctxdb";
    if (k % 2 == 0) {
      import_s.push_back(time_import(db, f.name, file));
      append_s.push_back(time_append(db, c));
    } else {
      append_s.push_back(time_append(db, c));
      import_s.push_back(time_import(db, f.name, file));
    }
  }
  r.import_s = median(import_s);
  r.append_s = median(append_s);
  r.import_rate = r.file_mb / r.import_s;
  r.append_rate = r.file_mb / r.append_s;

  const std::string files[2] = {file, write_session(f, dir, "big", mb * 4, r.sizes[1])};
  for (int k = 0; k < 2; ++k) {
    Converted events = k == 0 ? std::move(c) : convert(dir, f.name, files[k]);
    std::string ndjson = dir + "/events.ndjson";
    write_file(ndjson, events.session_id + "\n" + events.session_create + "\n" + events.ndjson);
    events = Converted{};
    r.kib[k][0] = peak_kib(self, f.name, dir + "/mem.ctxdb", files[k], "import");
    r.kib[k][1] = peak_kib(self, f.name, dir + "/mem.ctxdb", ndjson, "append");
  }
  fs::remove_all(dir + "/small");
  fs::remove_all(dir + "/big");
  return r;
}

void print(const Format &f, const Result &r) {
  double ratio = r.import_rate / r.append_rate;
  std::printf("%s: %.1f MB, %zu events (%.1f MB as NDJSON)\n", f.label, r.file_mb, r.events,
              r.ndjson_mb);
  std::printf("  %-28s %8.1f MB/s  (median %.2f s)\n", "transcript_import", r.import_rate,
              r.import_s);
  std::printf("  %-28s %8.1f MB/s  (median %.2f s)\n", "append_batch, same events", r.append_rate,
              r.append_s);
  std::printf("  ratio import/append        %8.2f  (goal >= 0.5: %s)\n", ratio,
              ratio >= 0.5 ? "met" : "not met");
  for (int k = 0; k < 2; ++k)
    std::printf("  peak RSS, %.1f MB file: import %.1f MB, append_batch of its events %.1f MB\n",
                r.sizes[k], r.kib[k][0] / 1024.0, r.kib[k][1] / 1024.0);
}

std::string json(const Format &f, const Result &r) {
  char b[512];
  std::snprintf(b, sizeof b,
                "{\"format\":\"%s\",\"file_mb\":%.2f,\"events\":%zu,\"import_mb_s\":%.2f,"
                "\"append_mb_s\":%.2f,\"ratio\":%.3f,\"peak_rss_mb\":["
                "{\"file_mb\":%.1f,\"import\":%.1f,\"append\":%.1f},"
                "{\"file_mb\":%.1f,\"import\":%.1f,\"append\":%.1f}]}",
                f.name, r.file_mb, r.events, r.import_rate, r.append_rate,
                r.import_rate / r.append_rate, r.sizes[0], r.kib[0][0] / 1024.0,
                r.kib[0][1] / 1024.0, r.sizes[1], r.kib[1][0] / 1024.0, r.kib[1][1] / 1024.0);
  return b;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 6 && std::strcmp(argv[1], "--child") == 0)
    return child(argv[2], argv[3], argv[4], argv[5]);
  size_t mb = 12;
  int rounds = 5;
  const char *only = nullptr;
  try {
    for (int i = 1; i + 1 < argc; i += 2) {
      if (std::strcmp(argv[i], "--mb") == 0) mb = std::strtoul(argv[i + 1], nullptr, 10);
      if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
      if (std::strcmp(argv[i], "--format") == 0) only = format_named(argv[i + 1]).name;
    }
    char tmpl[] = "/tmp/ctxdb-bench-transcript-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::printf("bench_transcript_import (%s build): %zu MB sessions, %d rounds\n",
                CTXDB_BENCH_BUILD_TYPE, mb, rounds);
    std::string results;
    for (const Format &f : kFormats) {
      if (only && std::strcmp(only, f.name) != 0) continue;
      Result r = run(f, dir, mb, rounds, argv[0]);
      print(f, r);
      std::fflush(stdout);
      results += (results.empty() ? "" : ",") + json(f, r);
    }
    std::printf("{\"bench\":\"transcript_import\",\"rounds\":%d,\"formats\":[%s]}\n", rounds,
                results.c_str());
    fs::remove_all(dir);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_transcript_import: %s\n", e.what());
    return 1;
  }
  return 0;
}
