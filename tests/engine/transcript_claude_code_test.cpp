// Claude Code session files read as drafts (engine/transcript/claude_code.cpp),
// over the fixtures in tests/fixtures/transcripts/claude-code/ (README.md
// there says what each covers), then appended to a real database.
#include "bundle_checks.hpp"
#include "test_util.hpp"
#include "transcript/claude_code.hpp"
#include "transcript/transcript.hpp"
#include "json/json_schema.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace transcript_claude_code_test {

using namespace ctxdb;
using namespace ctxdb::test;
using namespace ctxdb::transcript;

namespace {

const std::string kRoot = (std::filesystem::path(__FILE__).parent_path().parent_path() /
                           "fixtures" / "transcripts" / "claude-code")
                              .string() +
                          "/";
const std::string kShopId = "5f1b2c3d-0000-4000-8000-000000000001";
const std::string kShop = "projects/-home-dev-shop/" + kShopId + ".jsonl";
const std::string kAgent = "projects/-home-dev-shop/" + kShopId + "/subagents/agent-a1b2c3d.jsonl";
const std::string kLegacy = "projects/-home-dev-legacy/0a0b0c0d-0000-4000-8000-000000000002.jsonl";
const std::string kBroken = "projects/-home-dev-broken/0b0b0b0b-0000-4000-8000-000000000003.jsonl";
const std::string kLong = "projects/-home-dev-long/0c0c0c0c-0000-4000-8000-000000000004.jsonl";

std::string read(const std::string &rel) {
  std::ifstream f(kRoot + rel, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Parsed parse(const std::string &rel, ParseOptions o = {}) {
  o.file = rel;
  return parse_claude_code(read(rel), o);
}

// One draft read back.
struct Ev {
  std::string id, type, parent, json;
  int64_t first = 0, last = 0;
  std::string get(const char *key) const {
    simdjson::dom::parser p;
    simdjson::dom::element e = p.parse(json)["payload"][key];
    if (e.is_string()) return std::string(e.get_string().value());
    return simdjson::minify(e);
  }
};

std::vector<Ev> events(const Parsed &p, const std::string &session) {
  std::vector<Ev> out;
  for (const Draft &d : p.events) {
    if (d.session_id != session) continue;
    Ev e;
    e.json = d.event_json;
    e.id = field(d.event_json, "id");
    e.type = field(d.event_json, "type");
    e.parent = field(d.event_json, "parent_id");
    e.first = d.first_line;
    e.last = d.last_line;
    out.push_back(std::move(e));
  }
  return out;
}

size_t index_of(const std::vector<Ev> &evs, const std::string &id) {
  for (size_t i = 0; i < evs.size(); ++i)
    if (evs[i].id == id) return i;
  FAIL("no event " << id);
  return 0;
}

const Ev &find(const std::vector<Ev> &evs, const std::string &id) { return evs[index_of(evs, id)]; }

std::string sid(const std::string &s) { return "cc-" + kShopId + "-" + s; }

// Every draft of `p` appended to `db`, sessions first, as the importer does.
void append_all(Engine &db, const Parsed &p) {
  for (const DraftSession &s : p.sessions) db.session_create(s.create_json);
  for (const Draft &d : p.events) {
    INFO(d.event_json);
    db.append(d.session_id, d.event_json);
  }
}

const char *const kFormats[] = {
    "canonical", "openai.chat", "openai.responses", "anthropic.messages", "gemini.generate_content",
    "ai.sdk"};

// A compile in a provider's format has the shape the provider documents:
// the request schemas the adapters are checked against
// (tests/fixtures/providers/<format>.request.schema.json).
void check_provider_shape(const std::string &out, std::string_view format) {
  if (format == "canonical") return;
  std::string name(format);
  for (char &c : name)
    if (c == '.') c = '_';
  name += ".request.schema.json";
  std::ifstream in(std::filesystem::path(kRoot) / ".." / ".." / "providers" / name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  json::Schema schema = json::Schema::parse(text.str(), name);
  simdjson::dom::parser p;
  INFO(format << ": " << out);
  CHECK_NOTHROW(schema.validate(json::parse(p, out, "output"), "request"));
}

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The event ids of a messages() view, in order.
std::string message_ids(const std::string &messages) {
  simdjson::dom::parser p;
  std::string out;
  for (simdjson::dom::element m : p.parse(messages).get_array())
    out += std::string(m["event_id"].get_string().value()) + "\n";
  return out;
}

} // namespace

TEST_CASE("a session file: one message over several lines, its results paired") {
  Parsed p = parse(kShop);
  REQUIRE(p.sessions.size() == 1);
  CHECK(p.sessions[0].id == "cc-" + kShopId);
  CHECK(field(p.sessions[0].create_json, "event_id") == "cc-" + kShopId + "-start");
  CHECK(p.sessions[0].create_json.find(R"("agent_id":"claude-code","cwd":"/home/dev/shop")") !=
        std::string::npos);
  CHECK(p.lines_consumed == 50);
  CHECK(p.bytes_consumed == int64_t(read(kShop).size()));
  auto evs = events(p, "cc-" + kShopId);
  // msg_01 over lines 7, 8, 9 and 11, with line 10's result between: one message.
  const Ev &m1 = find(evs, sid("a01"));
  CHECK(m1.type == "AssistantMessageCreated");
  CHECK(m1.first == 7);
  CHECK(m1.last == 11);
  CHECK(
      m1.get("content") ==
      R"([{"type":"thinking","text":"The total probably misses the tax.","signature":"EsYBCkgIBxABsig01==","provider":"anthropic"},)"
      R"({"type":"text","text":"Let me read the code and run the test."},)"
      R"({"type":"tool_call","id":"toolu_01","name":"Read","args":{"file_path":"/home/dev/shop/cart.py"}},)"
      R"({"type":"tool_call","id":"toolu_02","name":"Bash","args":{"command":"pytest tests/test_cart.py","description":"Run the cart test"}}])");
  CHECK(m1.get("stop_reason") == "tool_use");
  CHECK(m1.get("response_id") == "msg_01");
  // The last line's usage: each line repeats the usage so far.
  CHECK(
      m1.get("usage").find(
          R"("input_tokens":12,"cache_read_tokens":4000,"cache_write_tokens":300,"output_tokens":61)") !=
      std::string::npos);
  CHECK(m1.get("provenance") == R"({"format":"claude-code","file":")" + kShop +
                                    R"(","line":7,"last_line":11,"record_id":"a01"})");
  // Neither a02, a03 nor a04 is an event of its own.
  for (const char *line : {"a02", "a03", "a04"})
    for (const Ev &e : evs) CHECK(e.id != sid(line));
  const Ev &r1 = find(evs, sid("t01-r1"));
  CHECK(r1.type == "ToolCallFinished");
  CHECK(r1.get("tool_call_id") == "toolu_01");
  CHECK(r1.get("name") == "Read");
  CHECK(index_of(evs, sid("t01-r1")) == index_of(evs, sid("a01")) + 1);
  const Ev &r2 = find(evs, sid("t02-r1"));
  CHECK(r2.type == "ToolCallFailed");
  CHECK(r2.get("is_error") == "true");
  CHECK(r2.get("output").starts_with("FAILED tests/test_cart.py::test_total"));
  // Parallel calls: t03's parent is a06, off the walk from the last line;
  // both results follow the one message, in the order they were written.
  const Ev &m2 = find(evs, sid("a05"));
  CHECK(m2.get("content").starts_with(
      R"([{"type":"thinking","redacted":true,"data":"EmwKAhgBEgy3redacted==","provider":"anthropic"},)"));
  CHECK(count(m2.get("content"), "tool_call") == 2);
  CHECK(index_of(evs, sid("t03-r1")) == index_of(evs, sid("a05")) + 1);
  CHECK(index_of(evs, sid("t04-r1")) == index_of(evs, sid("a05")) + 2);
  CHECK(find(evs, sid("t04-r1")).get("duration_ms") == "21");
  // An image in a tool result.
  const Ev &r5 = find(evs, sid("t05-r1"));
  CHECK(r5.get("content").starts_with(R"([{"type":"image","data":"iVBORw0KGgo)"));
  CHECK(r5.get("content").find(R"("mime_type":"image/png")") != std::string::npos);
}

TEST_CASE("the user's words are prompts; what Claude Code adds is context") {
  Parsed p = parse(kShop);
  auto evs = events(p, "cc-" + kShopId);
  auto context = [&](const char *id, const char *source) {
    const Ev &e = find(evs, sid(id));
    INFO(e.json);
    CHECK(e.type == "ContextAdded");
    CHECK(e.get("source") == source);
    CHECK(e.get("kind") == "context");
  };
  context("u01", "caveat");
  context("u02", "command");
  context("u03", "command_output");
  context("u04", "command"); // a system local_command line
  context("m01", "system_reminder");
  context("u06", "task_notification");
  context("u08", "command_output");
  context("i01", "interruption");
  std::vector<std::string> prompts;
  for (const Ev &e : evs)
    if (e.type == "UserPromptSubmitted") prompts.push_back(e.get("text"));
  CHECK(prompts == std::vector<std::string>{
                       "Fix the failing checkout test in cart.py; the screenshot shows the wrong "
                       "total.",
                       "Don't edit yet: first show me the diff you intend.",
                       "Actually, apply the fix but skip the slow tests.",
                       "Now apply the fix and run the tests."});
  // The prompt's image, as a block the engine stores as an artifact.
  CHECK(find(evs, sid("u05")).get("content").starts_with(R"([{"type":"image","data":"iVBOR)"));
}

TEST_CASE("interrupted calls, errors, a compaction, a subagent and bookkeeping records") {
  Parsed p = parse(kShop);
  auto evs = events(p, "cc-" + kShopId);
  // The interrupted edit: closed before the marker that says why.
  const Ev &c = find(evs, sid("i01-c1"));
  CHECK(c.type == "ToolCallCancelled");
  CHECK(c.get("tool_call_id") == "toolu_07");
  CHECK(c.get("reason") == "interrupted by the user");
  CHECK(index_of(evs, sid("i01")) == index_of(evs, sid("i01-c1")) + 1);
  // The Task call's result between SubagentStarted and SubagentFinished.
  size_t t6 = index_of(evs, sid("t06-r1"));
  CHECK(evs[t6 - 1].id == sid("t06-s1"));
  CHECK(evs[t6 - 1].get("child_session_id") == sid("a1b2c3d"));
  CHECK(evs[t6 - 1].get("task") == "Find callers of total");
  CHECK(evs[t6 + 1].type == "SubagentFinished");
  CHECK(evs[t6 + 1].get("summary") == "total() is called from checkout.py:12 and api.py:40");
  CHECK(evs[t6].get("duration_ms") == "5400");
  // Claude Code's own line for a failed request.
  CHECK(find(evs, sid("a13")).type == "ErrorRaised");
  CHECK(find(evs, sid("a13")).get("code") == "overloaded");
  // /compact: the boundary kept as a record, the summary as the compaction,
  // which keeps nothing before it.
  CHECK(find(evs, sid("c01")).type == "claude-code.system.compact_boundary");
  const Ev &k = find(evs, sid("c02"));
  CHECK(k.type == "CompactionCompleted");
  CHECK(k.get("first_kept_event_id") == sid("c02"));
  CHECK(k.get("tokens_before") == "48213");
  CHECK(k.get("summary").starts_with("This session is being continued"));
  CHECK(k.get("summarizer") == R"({"kind":"foreign","agent":"claude-code"})");
  CHECK(k.get("trigger") == "manual");
  CHECK(k.parent == sid("c01"));
  // Records with no core meaning, typed; only the unknown one is counted.
  CHECK(find(evs, "cc-" + kShopId + "-L1").type == "claude-code.file-history-snapshot");
  CHECK(find(evs, "cc-" + kShopId + "-L27").type == "claude-code.queue-operation");
  CHECK(find(evs, sid("s02")).type == "claude-code.system.turn_duration");
  CHECK(find(evs, sid("s03")).type == "claude-code.system.api_error");
  CHECK(find(evs, "cc-" + kShopId + "-L45").type == "claude-code.summary");
  CHECK(find(evs, "cc-" + kShopId + "-L46").type == "claude-code.custom-title");
  const Ev &odd = find(evs, "cc-" + kShopId + "-L48");
  CHECK(odd.type == "claude-code.frobnicate");
  CHECK(odd.get("record") == R"({"type":"frobnicate","sessionId":")" + kShopId + R"(","level":3})");
  CHECK(p.unknown == std::map<std::string, int64_t>{{"frobnicate", 1}});
}

TEST_CASE("a rewind: the path Claude resumes comes first, the branch it left after") {
  Parsed p = parse(kShop);
  auto evs = events(p, "cc-" + kShopId);
  // u10 (line 41) was asked after going back before u09 (line 36).
  size_t u10 = index_of(evs, sid("u10")), u09 = index_of(evs, sid("u09"));
  CHECK(u10 < u09);
  CHECK(find(evs, sid("u10")).parent == find(evs, sid("u09")).parent);
  CHECK(find(evs, sid("u10")).parent == sid("u08"));
  // The main path runs to the last message and the records after it.
  CHECK(index_of(evs, sid("a17")) < u09);
  CHECK(evs[index_of(evs, sid("a17")) + 1].id == "cc-" + kShopId + "-L45");
  CHECK(index_of(evs, sid("s04")) < u09);
  // The left branch's pending call is closed where the conversation went on.
  const Ev &b = find(evs, sid("a15-b1"));
  CHECK(b.type == "ToolCallCancelled");
  CHECK(b.get("tool_call_id") == "toolu_10");
  CHECK(b.first == 41);
  CHECK(b.id == evs.back().id);
  // Every parent is an event already given, or the session's start.
  std::set<std::string> seen{"cc-" + kShopId + "-start"};
  for (const Ev &e : evs) {
    INFO(e.id);
    CHECK(seen.count(e.parent) == 1);
    CHECK(seen.insert(e.id).second);
  }
}

TEST_CASE("a subagent file is a child session of the file that spawned it") {
  ClaudeCodeFile f = claude_code_file(kRoot + kAgent);
  CHECK(f.kind == ClaudeCodeFile::kSubagent);
  CHECK(f.session_id == sid("a1b2c3d"));
  CHECK(f.parent_session_id == "cc-" + kShopId);
  CHECK(claude_code_file(kRoot + kShop).kind == ClaudeCodeFile::kSession);
  CHECK(claude_code_file(kRoot + kShop).session_id == "cc-" + kShopId);
  CHECK(claude_code_file(kRoot + "projects/-home-dev-shop/" + kShopId +
                         "/subagents/agent-a1b2c3d.meta.json")
            .kind == ClaudeCodeFile::kNotASession);
  CHECK(claude_code_file("p/" + kShopId + "/subagents/workflows/w1/journal.jsonl").kind ==
        ClaudeCodeFile::kNotASession);
  CHECK(claude_code_file("p/s1/subagents/workflows/w1/agent-x9.jsonl").session_id == "cc-s1-x9");
  Parsed p = parse(kAgent);
  REQUIRE(p.sessions.size() == 1);
  CHECK(p.sessions[0].id == sid("a1b2c3d"));
  CHECK(p.sessions[0].parent_session_id == "cc-" + kShopId);
  auto evs = events(p, sid("a1b2c3d"));
  REQUIRE(evs.size() == 4);
  CHECK(evs[0].type == "UserPromptSubmitted");
  CHECK(evs[0].id == sid("a1b2c3d-s-u1"));
  CHECK(evs[2].type == "ToolCallFinished");
}

TEST_CASE("an older file: its sidechain in the same file, found by its task") {
  Parsed p = parse(kLegacy);
  const std::string main = "cc-0a0b0c0d-0000-4000-8000-000000000002";
  REQUIRE(p.sessions.size() == 2);
  CHECK(p.sessions[1].id == main + "-l-s1");
  CHECK(p.sessions[1].parent_session_id == main);
  auto evs = events(p, main);
  const Ev &started = find(evs, main + "-l-t1-s1");
  CHECK(started.get("child_session_id") == main + "-l-s1");
  // The hook's progress line hangs off the call: a record in line after
  // it, not a branch of its own.
  CHECK(find(evs, main + "-l-p1").type == "claude-code.progress");
  CHECK(find(evs, main + "-l-p1").parent == main + "-l-a1");
  CHECK(find(evs, main + "-l-t1-s1").parent == main + "-l-p1");
  // Blocks no core event holds, kept beside their message.
  CHECK(find(evs, main + "-l-u1").get("text") == "List the TODOs in src/, and those of the spec.");
  CHECK(find(evs, main + "-l-u1-k1").type == "claude-code.content_block");
  CHECK(find(evs, main + "-l-u1-k1").get("block").starts_with(R"({"type":"document")"));
  CHECK(find(evs, main + "-l-a2-k1").get("block").starts_with(R"({"type":"server_tool_use")"));
  CHECK(
      find(evs, main + "-l-a2-k2").get("block").starts_with(R"({"type":"web_search_tool_result")"));
  CHECK(find(evs, main + "-l-a2").get("content") ==
        R"([{"type":"text","text":"One TODO: src/a.py:3 (retry)."}])");
  auto side = events(p, main + "-l-s1");
  REQUIRE(side.size() == 2);
  CHECK(side[0].get("text") == "Find every TODO comment under src/");
  const Ev &shot = find(evs, main + "-l-m1");
  CHECK(shot.type == "ContextAdded");
  CHECK(shot.get("source") == "meta");
  CHECK(shot.get("content").starts_with(R"([{"type":"image","data":"iVBOR)"));
  CHECK(p.unknown.empty());
}

TEST_CASE("a file with several sidechains: a session each, all children of the file's") {
  // Each sidechain root (no agentId) opens a session of its own; the
  // third needs the file's session once the second has been added.
  const std::string head = R"({"parentUuid":)";
  auto line = [&](const std::string &parent, bool side, const std::string &uuid,
                  const std::string &text) {
    return head + parent + R"(,"isSidechain":)" + (side ? "true" : "false") +
           R"(,"userType":"external","cwd":"/home/dev/legacy","sessionId":)"
           R"("0a0b0c0d-0000-4000-8000-000000000002","version":"1.0.30","type":"user","uuid":")" +
           uuid +
           R"(","timestamp":"2026-03-01T10:00:01.007Z","message":{"role":"user",)"
           R"("content":")" +
           text + "\"}}\n";
  };
  std::string file =
      line("null", false, "u1", "List the TODOs") + line("null", true, "s1", "Scan src/") +
      line("null", true, "t1", "Scan docs/") + line("null", true, "v1", "Scan tests/");
  ParseOptions o;
  o.file = kLegacy;
  Parsed p = parse_claude_code(file, o);
  const std::string main = "cc-0a0b0c0d-0000-4000-8000-000000000002";
  REQUIRE(p.sessions.size() == 4);
  CHECK(p.sessions[0].id == main);
  for (size_t i = 1; i < 4; ++i) {
    CHECK(p.sessions[i].id == main + "-" + std::string(1, "stv"[i - 1]) + "1");
    CHECK(p.sessions[i].parent_session_id == main);
  }
}

TEST_CASE("a compaction that keeps the latest messages: they are its first kept events") {
  const std::string rel = "projects/-home-dev-partial/0d0d0d0d-0000-4000-8000-000000000005.jsonl";
  const std::string id = "cc-0d0d0d0d-0000-4000-8000-000000000005";
  Parsed p = parse(rel);
  auto evs = events(p, id);
  const Ev &k = find(evs, id + "-p-c2");
  CHECK(k.type == "CompactionCompleted");
  CHECK(k.get("first_kept_event_id") == id + "-p-u2");
  CHECK(k.get("tokens_before") == "170000");
  TempDir dir;
  Engine db(dir.file("partial.ctxdb"), "");
  append_all(db, p);
  CHECK(field(db.verify(std::nullopt), "ok") == "true");
  // As Claude resumes: the summary, the kept messages, what came after.
  std::string out =
      db.compile(R"({"session_id":")" + id + R"(","max_tokens":100000,"request":"Next?"})");
  // The first prompt, summarized, stays the goal only.
  CHECK(count(out, "Rename the config loader.") == 1);
  CHECK(out.find("Renamed load_cfg to load_config.") == std::string::npos);
  CHECK(count(out, "Now update its callers.") == 1);
  CHECK(count(out, "the config loader was renamed to load_config") == 1);
  CHECK(out.find("Now update its callers.") < out.find("Add a test for load_config."));
  for (const char *format : kFormats)
    check_provider_shape(db.compile(R"({"session_id":")" + id +
                                    R"(","max_tokens":100000,"request":"Next?","format":")" +
                                    format + "\"}"),
                         format);
  // Attachments: a CLAUDE.md is instructions, a hook's words context, a
  // prompt typed while Claude worked the user's words.
  const Ev &md = find(evs, id + "-p-m1");
  CHECK(md.type == "ContextAdded");
  CHECK(md.get("kind") == "instructions");
  CHECK(md.get("text") ==
        "Contents of /home/dev/partial/src/CLAUDE.md:\n\nRun the tests with make test.");
  CHECK(find(evs, id + "-p-m2").get("source") == "hook");
  CHECK(find(evs, id + "-p-m3").type == "UserPromptSubmitted");
  CHECK(find(evs, id + "-p-m3").get("text") == "Also document load_config in the README.");
  CHECK(find(evs, id + "-p-m4").type == "claude-code.attachment");
  CHECK(count(out, "Run the tests with make test.") == 1);
  CHECK(count(out, "Also document load_config in the README.") == 1);
}

TEST_CASE("a malformed line names its file and line; a torn last line waits") {
  CHECK(code_of([] { parse(kBroken); }) == Code::kInvalidJson);
  CHECK(message_of([] { parse(kBroken); }).starts_with(kBroken + ":3: "));
  std::string bytes = read(kShop);
  std::string torn = bytes + R"({"type":"user","message":{"role":"us)";
  ParseOptions o;
  o.file = kShop;
  Parsed p = parse_claude_code(torn, o);
  CHECK(p.lines_consumed == 50);
  CHECK(p.bytes_consumed == int64_t(bytes.size()));
  CHECK(p.events.size() == parse(kShop).events.size());
  // A line that is not an object, or a message without content.
  CHECK(message_of([&] { parse_claude_code("[1]\n", o); }).starts_with(kShop + ":1: "));
  CHECK(message_of([&] {
          parse_claude_code(R"({"type":"assistant","uuid":"x","message":{"role":"assistant"}})"
                            "\n",
                            o);
        }).starts_with(kShop + ":1: "));
}

TEST_CASE("an answer with no block a message holds is kept as its record") {
  ParseOptions o;
  o.file = "p/s1.jsonl";
  Parsed p = parse_claude_code(
      R"({"type":"user","uuid":"u","parentUuid":null,"message":{"role":"user","content":"hi"}})"
      "\n"
      R"({"type":"assistant","uuid":"a","parentUuid":"u","message":{"id":"msg_1","role":"assistant","content":[]}})"
      "\n",
      o);
  REQUIRE(p.events.size() == 2);
  CHECK(field(p.events[1].event_json, "type") == "claude-code.assistant");
  CHECK(field(p.events[1].event_json, "id") == "cc-s1-a");
  CHECK(p.unknown.empty());
}

TEST_CASE("odd records anywhere: drafts, or an error naming the line, never a crash") {
  const char *const odd[] = {
      R"({})",
      R"({"type":"user"})",
      R"({"type":"assistant","uuid":"x1","message":{}})",
      R"({"type":"assistant","uuid":"x2","message":{"id":"m","content":[{"type":"tool_use"}]}})",
      R"({"type":"user","uuid":"x3","message":{"content":[{"type":"tool_result"},{"type":"image"}]}})",
      R"({"type":"user","uuid":"x4","parentUuid":"x4","message":{"content":[7,"s",null]}})",
      R"({"type":"system","uuid":"x5","subtype":"compact_boundary","compactMetadata":5})",
      R"({"type":"user","uuid":"x6","isCompactSummary":true,"parentUuid":"x5","message":{"content":7}})",
      R"({"type":"attachment","uuid":"x7","attachment":{"type":"queued_command","prompt":5}})",
      R"({"type":"attachment","uuid":"x8","attachment":{"type":"nested_memory","content":5}})",
      R"({"type":"attachment","uuid":"x9","attachment":7})",
      R"({"type":"user","uuid":"a01","parentUuid":"zz","message":{"content":"a copy"}})",
      R"({"type":7})",
  };
  std::string bytes = read(kShop);
  std::vector<size_t> starts{0};
  for (size_t at = bytes.find('\n'); at != std::string::npos; at = bytes.find('\n', at + 1))
    starts.push_back(at + 1);
  ParseOptions o;
  o.file = kShop;
  for (const char *line : odd)
    for (size_t k = 0; k < starts.size(); ++k) {
      std::string mutated = bytes.substr(0, starts[k]) + line + "\n" + bytes.substr(starts[k]);
      INFO(line << " as line " << k + 1);
      try {
        Parsed p = parse_claude_code(mutated, o);
        CHECK(p.lines_consumed == 51);
      } catch (const Error &e) {
        CHECK(std::string(e.what()).starts_with(kShop + ":" + std::to_string(k + 1) + ": "));
      }
    }
}

TEST_CASE("a file read again gives the same drafts; a grown file, its new lines apart") {
  std::string bytes = read(kShop);
  ParseOptions o;
  o.file = kShop;
  Parsed whole = parse_claude_code(bytes, o);
  CHECK(parse_claude_code(bytes, o).events.size() == whole.events.size());
  // Cut after line 9 (a03), inside msg_01: the second pass's drafts of lines
  // 1–9 are the first pass's, and the rest of the message is a draft apart.
  size_t cut = 0;
  for (int n = 0; n < 9; ++n) cut = bytes.find('\n', cut) + 1;
  Parsed first = parse_claude_code(bytes.substr(0, cut), o);
  o.resume_after_line = 9;
  Parsed second = parse_claude_code(bytes, o);
  std::map<std::string, std::string> again;
  for (const Draft &d : second.events)
    if (d.last_line <= 9) again[field(d.event_json, "id")] = d.event_json;
  for (const Draft &d : first.events) {
    INFO(d.event_json);
    CHECK(again[field(d.event_json, "id")] == d.event_json);
  }
  for (const Draft &d : second.events) CHECK((d.last_line <= 9 || d.first_line > 9));
  auto evs = events(second, "cc-" + kShopId);
  CHECK(find(evs, sid("a01")).last == 9);
  CHECK(find(evs, sid("a04")).type == "AssistantMessageCreated"); // the rest of msg_01
  // Cut anywhere: what a later pass gives again for the lines already read
  // is what the earlier pass gave, byte for byte.
  for (int64_t k = 1; k <= 50; ++k) {
    size_t at = 0;
    for (int64_t n = 0; n < k; ++n) at = bytes.find('\n', at) + 1;
    ParseOptions a, b;
    a.file = b.file = kShop;
    b.resume_after_line = k;
    Parsed before = parse_claude_code(bytes.substr(0, at), a), after = parse_claude_code(bytes, b);
    std::map<std::string, std::string> later;
    for (const Draft &d : after.events) {
      CHECK((d.last_line <= k || d.first_line > k));
      if (d.last_line <= k) later[field(d.event_json, "id")] = d.event_json;
    }
    for (const Draft &d : before.events) {
      INFO("cut after line " << k << ": " << d.event_json);
      CHECK(later[field(d.event_json, "id")] == d.event_json);
    }
    // The session is made from its first record (line 2; line 1 is a snapshot).
    if (k >= 2) CHECK(before.sessions.at(0).create_json == after.sessions.at(0).create_json);
  }
  // While following, a message whose last block may still come waits.
  o.resume_after_line = 0;
  o.final = false;
  Parsed live = parse_claude_code(bytes.substr(0, cut), o);
  CHECK(live.lines_consumed == 6);
  for (const Draft &d : live.events) CHECK(d.last_line <= 6);
  // ... and a file with no record of the conversation yet, all of it.
  Parsed early = parse_claude_code(bytes.substr(0, bytes.find('\n') + 1), o);
  CHECK(early.lines_consumed == 0);
  CHECK(early.sessions.empty());
}

TEST_CASE("imported into a database: verify passes, every format compiles, words once") {
  TempDir dir;
  Engine db(dir.file("cc.ctxdb"), "");
  Parsed shop = parse(kShop), agent = parse(kAgent), legacy = parse(kLegacy);
  append_all(db, shop);
  append_all(db, agent);
  append_all(db, legacy);
  CHECK(field(db.verify(std::nullopt), "ok") == "true");
  CHECK_NOTHROW(db.rebuild(R"({"check":true})"));
  // The goal is the real first prompt, not a command wrapper.
  std::string state = db.state("cc-" + kShopId, std::nullopt, std::nullopt);
  INFO(state);
  CHECK(state.find(R"("user_goal":{"text":"Fix the failing checkout test in cart.py)") !=
        std::string::npos);
  // main is the path Claude resumes.
  std::string msgs = db.messages("cc-" + kShopId, std::nullopt);
  CHECK(msgs.find("skip the slow tests") != std::string::npos);
  CHECK(msgs.find("Now apply the fix and run the tests.") == std::string::npos);
  for (const char *format : kFormats) {
    INFO(format);
    std::string out = db.compile(R"({"session_id":"cc-)" + kShopId +
                                 R"(","max_tokens":100000,"request":"Anything left?","format":")" +
                                 format + "\"}");
    CHECK(count(out, "Actually, apply the fix but skip the slow tests.") == 1);
    // Claude kept nothing from before /compact: its summary stands for it.
    CHECK(out.find("Don't edit yet: first show me the diff you intend.") == std::string::npos);
    CHECK(count(out, "2. The fix (multiply by 1 + TAX) is agreed but not applied.") == 1);
    CHECK(out.find("Now apply the fix and run the tests.") == std::string::npos);
    check_provider_shape(out, format);
    // What Claude Code said in the user's turn is context, marked so.
    CHECK(count(out, "Compacted (ctrl+o to see full summary)") == 1);
    CHECK(out.find("<context source=") != std::string::npos);
    if (std::string_view(format) == "canonical") {
      Bundle b(out);
      check_bundle(b);
    }
  }
  // Two branches in the session: main, and the one the rewind left.
  simdjson::dom::parser sp;
  CHECK(sp.parse(db.branch_list("cc-" + kShopId)).get_array().value().size() == 2);
  // One branch: the progress line is in line, not a fork.
  simdjson::dom::parser bp;
  CHECK(bp.parse(db.branch_list("cc-0a0b0c0d-0000-4000-8000-000000000002"))
            .get_array()
            .value()
            .size() == 1);
  // The older file's session, its sidechain, and the subagent file's.
  for (const std::string &s :
       {std::string("cc-0a0b0c0d-0000-4000-8000-000000000002"),
        std::string("cc-0a0b0c0d-0000-4000-8000-000000000002-l-s1"), sid("a1b2c3d")})
    for (const char *format : kFormats) {
      INFO(s << " " << format);
      std::string out;
      CHECK_NOTHROW(out = db.compile(R"({"session_id":")" + s +
                                     R"(","max_tokens":100000,"request":"More?","format":")" +
                                     format + "\"}"));
      check_provider_shape(out, format);
    }
}

TEST_CASE("imported in two passes, cut anywhere: the second appends only its new lines") {
  std::string bytes = read(kShop);
  std::string whole_messages;
  {
    TempDir dir;
    Engine db(dir.file("one.ctxdb"), "");
    append_all(db, parse(kShop));
    whole_messages = message_ids(db.messages("cc-" + kShopId, std::nullopt));
  }
  for (int64_t k = 1; k < 50; ++k) {
    INFO("cut after line " << k);
    size_t at = 0;
    for (int64_t n = 0; n < k; ++n) at = bytes.find('\n', at) + 1;
    TempDir dir;
    Engine db(dir.file("two.ctxdb"), "");
    ParseOptions o;
    o.file = kShop;
    append_all(db, parse_claude_code(bytes.substr(0, at), o));
    o.resume_after_line = k;
    Parsed rest = parse_claude_code(bytes, o);
    for (const Draft &d : rest.events) {
      if (d.last_line <= k) continue;
      INFO(d.event_json);
      db.append(d.session_id, d.event_json);
    }
    CHECK(field(db.verify(std::nullopt), "ok") == "true");
    // Before the rewind was written, main was the branch it left.
    if (k >= 41) CHECK(message_ids(db.messages("cc-" + kShopId, std::nullopt)) == whole_messages);
  }
}

TEST_CASE("a long session: every record kept, and it compiles within a small budget") {
  Parsed p = parse(kLong);
  CHECK(p.lines_consumed == 2520);
  const std::string id = "cc-0c0c0c0c-0000-4000-8000-000000000004";
  auto evs = events(p, id);
  // Per turn: the prompt, one message of two lines, its result, the answer,
  // the turn's duration.
  CHECK(evs.size() == 420 * 5);
  CHECK(p.unknown.empty());
  TempDir dir;
  Engine db(dir.file("long.ctxdb"), "");
  append_all(db, p);
  CHECK(field(db.verify(std::nullopt), "ok") == "true");
  CHECK_NOTHROW(db.rebuild(R"({"check":true})"));
  for (const char *format : kFormats) {
    INFO(format);
    std::string out;
    CHECK_NOTHROW(out = db.compile(R"({"session_id":")" + id +
                                   R"(","max_tokens":4000,"request":"Summarize.","format":")" +
                                   format + "\"}"));
    check_provider_shape(out, format);
  }
  Bundle b(
      db.compile(R"({"session_id":")" + id + R"(","max_tokens":4000,"request":"Summarize."})"));
  check_bundle(b);
  CHECK(b.used() <= 4000);
}

} // namespace transcript_claude_code_test
