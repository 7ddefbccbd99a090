// Codex CLI rollouts read as drafts (engine/transcript/codex.cpp) over the
// fixtures of tests/fixtures/transcripts/codex/ (laid out as ~/.codex keeps
// them; README.md there says what each covers), then appended to a real
// database: verify passes, every provider format compiles, the user's words
// appear once and the goal is the user's first request.
#include "bundle_checks.hpp"
#include "engine.hpp"
#include "error.hpp"
#include "provider_checks.hpp"
#include "test_util.hpp"
#include "transcript/codex.hpp"
#include "transcript/transcript.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace transcript_codex_test {

using namespace ctxdb;
using transcript::Draft;
using transcript::Parsed;
using transcript::ParseOptions;

namespace {

const std::filesystem::path kRoot = std::filesystem::path(__FILE__).parent_path().parent_path() /
                                    "fixtures" / "transcripts" / "codex";

const std::string kFull =
    "sessions/2025/10/29/rollout-2025-10-29T01-00-00-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl";
const std::string kCompaction =
    "sessions/2025/11/02/rollout-2025-11-02T09-00-00-019a3b10-7c2e-7f31-9a0d-2c5be81f4e77.jsonl";
const std::string kOld =
    "sessions/2025/05/07/rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl";
const std::string kMalformed =
    "sessions/2025/11/03/rollout-2025-11-03T08-00-00-019a4c21-0b3d-7e42-8b1e-3d6cf92a5f88.jsonl";
const std::string kTorn =
    "sessions/2025/11/04/rollout-2025-11-04T08-00-00-019a5d32-1c4e-7f53-9c2f-4e7da03b6a99.jsonl";
const std::string kRollback =
    "sessions/2025/11/05/rollout-2025-11-05T10-00-00-019a6e43-2d5f-7a64-8d30-5f8eb14c7baa.jsonl";
const std::string kRollbackSid = "codex-019a6e43-2d5f-7a64-8d30-5f8eb14c7baa";

const std::string kFirstPrompt =
    "The `get` of the kv store returns stale values after a `put` on the same key. Find out why "
    "and fix it; the screenshot shows the failing test.";

std::string read_file(const std::string &rel) {
  std::ifstream in(kRoot / rel, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << rel);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Parsed parse(const std::string &bytes, const std::string &file, int64_t resume = 0,
             bool final = true) {
  ParseOptions o;
  o.file = file;
  o.resume_after_line = resume;
  o.final = final;
  return transcript::parse_codex(bytes, o);
}

Parsed parse_fixture(const std::string &rel) { return parse(read_file(rel), rel); }

// A draft read back.
struct Ev {
  std::string json;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  explicit Ev(std::string j) : json(std::move(j)) { doc = parser.parse(json).value(); }
  std::string str(const char *key) { return std::string(doc[key].get_string().value()); }
  simdjson::dom::element payload() { return doc["payload"].value(); }
  std::string pstr(const char *key) {
    std::string_view s;
    return payload()[key].get(s) ? "" : std::string(s);
  }
  bool has(const char *key) { return !payload()[key].error(); }
};

struct Events {
  std::vector<std::unique_ptr<Ev>> all;
  explicit Events(const Parsed &p) {
    for (const Draft &d : p.events) all.push_back(std::make_unique<Ev>(d.event_json));
  }
  Ev &by_id(const std::string &id) {
    for (auto &e : all)
      if (e->str("id") == id) return *e;
    FAIL("no event " << id);
    throw 0;
  }
  std::vector<Ev *> of_type(const std::string &type) {
    std::vector<Ev *> out;
    for (auto &e : all)
      if (e->str("type") == type) out.push_back(e.get());
    return out;
  }
  std::string types() {
    std::string out;
    for (auto &e : all) out += e->str("id") + " " + e->str("type") + "\n";
    return out;
  }
};

const std::string kSid = "codex-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5";

std::string id(const std::string &sid, int line, const std::string &suffix = "") {
  return sid + "-L" + std::to_string(line) + suffix;
}

// Appends a file's drafts to a database: its sessions, then its events.
void append_all(Engine &db, const Parsed &p) {
  for (const auto &s : p.sessions) db.session_create(s.create_json);
  for (const Draft &d : p.events) {
    INFO(d.event_json.substr(0, 300));
    db.append(d.session_id, d.event_json);
  }
}

size_t occurrences(const std::string &hay, const std::string &needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) ++n;
  return n;
}

// The request's text as a JSON string body (quotes escaped as a compile writes them).
std::string escaped(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

const char *const kFormats[] = {
    "canonical", "openai.chat", "openai.responses", "anthropic.messages", "gemini.generate_content",
    "ai.sdk"};

// What a rolled back session resumes with, compiled into every format:
// the kept turns once, the dropped ones never.
void check_resumes_without_dropped_turns(Engine &db, const std::string &branch) {
  for (const char *format : kFormats) {
    INFO(format);
    std::string req = R"({"session_id":")" + kRollbackSid + R"(","max_tokens":100000,)" +
                      (branch.empty() ? "" : R"("branch_id":")" + branch + R"(",)") +
                      R"("continuation":true,"format":")" + format + "\"}";
    std::string out = db.compile(req);
    CHECK(occurrences(out, "Add a --json flag to the report command.") == 1);
    CHECK(occurrences(out, "src/cli.py:42:def report(args):") == 1);
    CHECK(occurrences(out, "Write the changelog entry for --json.") == 1);
    CHECK(occurrences(out, "Added the `--json` entry to CHANGELOG.md.") == 1);
    CHECK(occurrences(out, "Now make JSON the default output.") == 0); // rolled back (1 turn)
    CHECK(occurrences(out, "network_access>enabled") == 0);            // its context with it
    CHECK(occurrences(out, "Keep text as the default") == 0);          // rolled back (2 turns)
    CHECK(occurrences(out, "4 passed in 0.31s") == 0);
    CHECK(occurrences(out, "--yaml") == 0);
    CHECK(occurrences(out, "gAAAAABpC0rollback_yaml_reasoning") == 0);
    if (std::string(format) == "canonical") {
      test::Bundle b(out);
      test::check_bundle(b, true);
    } else {
      test::provider_checks::check_provider(out, format);
    }
  }
}

std::string branch_of(Engine &db, const std::string &event_id) {
  return test::field(db.event_get(event_id), "branch_id");
}

} // namespace

TEST_CASE("codex: a rollback drops the newest turns from the path; they are a branch") {
  Parsed p = parse_fixture(kRollback);
  Events ev(p);
  INFO(ev.types());
  const std::string &sid = kRollbackSid;
  auto parent = [&](int line, const std::string &suffix = "") {
    return ev.by_id(id(sid, line, suffix)).str("parent_id");
  };
  // Every event names the one before it on its path.
  CHECK(ev.all.front()->str("parent_id") == sid + "-start");
  CHECK(parent(10) == id(sid, 8));
  // Rolled back by 1: turn 2 (its context update on line 17, its prompt on
  // 18) leaves the path; the record and what follows continue from line 16.
  CHECK(parent(17) == id(sid, 16));
  CHECK(parent(24) == id(sid, 16));
  CHECK(ev.by_id(id(sid, 24)).str("type") == "codex.event_msg.thread_rolled_back");
  CHECK(parent(25) == id(sid, 24));
  // Rolled back by 2: turns 3 and 4 leave it; the aborted call is closed on its branch.
  CHECK(parent(27) == id(sid, 26));
  CHECK(parent(44) == id(sid, 26));
  CHECK(parent(43, "-c1") == id(sid, 40));
  CHECK(parent(47) == id(sid, 46));
  // The path Codex resumes with comes first, the dropped turns after it.
  auto at = [&](int line) {
    for (size_t i = 0; i < ev.all.size(); ++i)
      if (ev.all[i]->str("id") == id(sid, line)) return i;
    FAIL("no line " << line);
    return size_t(0);
  };
  CHECK(at(52) < at(17));
  CHECK(at(17) < at(18));
  CHECK(at(52) < at(27));
  CHECK(at(27) < at(40));
  CHECK(p.unknown.empty());

  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  append_all(db, p);
  CHECK(test::field(db.verify(sid), "ok") == "true");
  CHECK(test::field(db.rebuild(R"({"check":true})"), "identical") == "true");
  std::string main = branch_of(db, id(sid, 52));
  CHECK(branch_of(db, id(sid, 6)) == main);
  CHECK(branch_of(db, id(sid, 44)) == main);
  CHECK(branch_of(db, id(sid, 17)) != main);
  CHECK(branch_of(db, id(sid, 27)) != main);
  CHECK(branch_of(db, id(sid, 17)) != branch_of(db, id(sid, 27)));
  CHECK(db.tool_calls(sid, std::nullopt).find(R"("status":"pending")") == std::string::npos);
  check_resumes_without_dropped_turns(db, "");
}

TEST_CASE("codex: a rollback of more turns than there are keeps what precedes the first") {
  auto line = [](const std::string &type, const std::string &payload) {
    return R"({"timestamp":"2025-11-08T08:00:00.000Z","type":")" + type + R"(","payload":)" +
           payload + "}\n";
  };
  auto user = [&](const std::string &text) {
    return line("response_item",
                R"({"type":"message","role":"user","content":[{"type":"input_text","text":")" +
                    text + R"("}]})");
  };
  std::string bytes =
      line("session_meta", R"({"id":"r-1","timestamp":"2025-11-08T08:00:00.000Z","cwd":"/w"})") +
      user("<environment_context><cwd>/w</cwd></environment_context>") + user("one") +
      line(
          "response_item",
          R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"a1"}]})") +
      user("two") +
      line("response_item",
           R"({"type":"function_call","name":"shell","arguments":"{}","call_id":"call_open"})") +
      line("event_msg", R"({"type":"thread_rolled_back","num_turns":0})") +
      line("event_msg", R"({"type":"thread_rolled_back","num_turns":5})") + user("three");
  Parsed p = parse(bytes, "rollout-r.jsonl");
  Events ev(p);
  INFO(ev.types());
  const std::string sid = "codex-r-1";
  // Rolling back no turn changes nothing; five drop both, from the first
  // prompt on: the environment context before it stays.
  CHECK(ev.by_id(id(sid, 7)).str("parent_id") == id(sid, 6));
  CHECK(ev.by_id(id(sid, 8)).str("parent_id") == id(sid, 2));
  CHECK(ev.by_id(id(sid, 9)).str("parent_id") == id(sid, 8));
  // The call the dropped turns left open is cancelled on their branch.
  Ev &cancelled = ev.by_id(id(sid, 8, "-c1"));
  CHECK(cancelled.pstr("tool_call_id") == "call_open");
  CHECK(cancelled.str("parent_id") == id(sid, 7));
  CHECK(p.events.back().event_json == cancelled.json);

  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  append_all(db, p);
  CHECK(test::field(db.verify(sid), "ok") == "true");
  std::string out = db.compile(R"({"session_id":")" + sid +
                               R"(","max_tokens":100000,"format":"openai.responses"})");
  CHECK(occurrences(out, "three") == 1);
  CHECK(occurrences(out, "one") == 0);
  CHECK(occurrences(out, "call_open") == 0);
  CHECK(occurrences(out, "<cwd>/w</cwd>") == 1);
}

TEST_CASE("codex: a rollback read in a later pass forks where it is") {
  std::string bytes = read_file(kRollback);
  Parsed whole = parse(bytes, kRollback);
  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  std::string file =
      dir.file("rollout-2025-11-05T10-00-00-019a6e43-2d5f-7a64-8d30-5f8eb14c7baa.jsonl");
  std::string opts = R"({"format":"codex","path":")" + file + R"(","final":false})";
  std::string active;
  simdjson::dom::parser parser;
  // The file as Codex writes it, one line a pass.
  for (size_t cut = bytes.find('\n'); cut != std::string::npos; cut = bytes.find('\n', cut + 1)) {
    std::ofstream(file, std::ios::binary) << bytes.substr(0, cut + 1);
    std::string report = db.transcript_import(opts);
    INFO("cut at byte " << cut << ": " << report);
    simdjson::dom::element s = parser.parse(report)["sessions"].at(0).value();
    REQUIRE(s["status"].get_string().value() != "failed");
    std::string_view branch;
    if (!s["active_branch_id"].get(branch))
      active = std::string(branch);
    else if (s["status"].get_string().value() == "imported")
      active.clear();
  }
  // The same events, each with the parent a single pass gives it.
  for (const Draft &d : whole.events) {
    Ev e(d.event_json);
    INFO(d.event_json.substr(0, 200));
    CHECK(test::field(db.event_get(e.str("id")), "parent_id") == e.str("parent_id"));
  }
  CHECK(test::field(db.verify(std::nullopt), "ok") == "true");
  CHECK(test::field(db.rebuild(R"({"check":true})"), "identical") == "true");
  // The rollbacks came after the turns they drop: the resumed path is a
  // branch of its own, which the importer names.
  REQUIRE(!active.empty());
  CHECK(branch_of(db, id(kRollbackSid, 52)) == active);
  check_resumes_without_dropped_turns(db, active);
}

TEST_CASE("codex: a session's records become its conversation, context and custom events") {
  Parsed p = parse_fixture(kFull);
  Events ev(p);
  INFO(ev.types());

  REQUIRE(p.sessions.size() == 1);
  CHECK(p.sessions[0].id == kSid);
  CHECK(p.sessions[0].parent_session_id.empty());
  Ev start(p.sessions[0].create_json);
  CHECK(start.str("event_id") == kSid + "-start");
  CHECK(start.pstr("agent_id") == "codex");
  CHECK(start.pstr("cwd") == "/home/ana/src/kv");
  CHECK(start.pstr("repo") == "git@github.com:ana/kv.git");

  // Every line is consumed; every id is valid, unique, and carries its provenance.
  CHECK(p.lines_consumed == 43);
  CHECK(p.bytes_consumed == static_cast<int64_t>(read_file(kFull).size()));
  std::set<std::string> ids;
  std::regex valid("^[A-Za-z0-9_.:-]{1,128}$");
  for (auto &e : ev.all) {
    CHECK(std::regex_match(e->str("id"), valid));
    CHECK(ids.insert(e->str("id")).second);
    simdjson::dom::element prov = e->payload()["provenance"].value();
    CHECK(prov["format"].get_string().value() == "codex");
    CHECK(prov["file"].get_string().value() == kFull);
    CHECK(prov["line"].get_int64().value() >= 1);
  }

  // Standing instructions: base instructions, the developer message, AGENTS.md.
  Ev &base = ev.by_id(id(kSid, 1, "-b"));
  CHECK(base.str("type") == "ContextAdded");
  CHECK(base.pstr("kind") == "instructions");
  CHECK(base.pstr("source") == "base_instructions");
  CHECK(ev.by_id(id(kSid, 2)).pstr("source") == "developer");
  CHECK(ev.by_id(id(kSid, 2)).pstr("kind") == "instructions");
  CHECK(ev.by_id(id(kSid, 3)).pstr("source") == "agents_md");
  CHECK(ev.by_id(id(kSid, 3)).pstr("kind") == "instructions");
  // Injected context at its place.
  CHECK(ev.by_id(id(kSid, 4)).pstr("kind") == "context");
  CHECK(ev.by_id(id(kSid, 4)).pstr("source") == "environment_context");
  CHECK(ev.by_id(id(kSid, 34)).pstr("source") == "interruption");
  CHECK(ev.by_id(id(kSid, 35)).pstr("source") == "user_shell_command");
  CHECK(ev.by_id(id(kSid, 35)).pstr("kind") == "context");

  // The user's words, once each (the event_msg echoes are custom events).
  auto prompts = ev.of_type("UserPromptSubmitted");
  REQUIRE(prompts.size() == 3);
  CHECK(prompts[0]->pstr("text") == kFirstPrompt);
  simdjson::dom::array blocks = prompts[0]->payload()["content"].get_array().value();
  REQUIRE(blocks.size() == 2);
  CHECK(blocks.at(1)["type"].get_string().value() == "image");
  CHECK(blocks.at(1)["mime_type"].get_string().value() == "image/png");
  CHECK(prompts[1]->pstr("text") == "Now make `delete` drop it too, and add a test.");
  CHECK(prompts[2]->pstr("text") == "Skip the full suite; only run the store tests.");
  CHECK(ev.by_id(id(kSid, 8)).str("type") == "codex.event_msg.user_message");
  CHECK(ev.by_id(id(kSid, 12)).str("type") == "codex.event_msg.agent_message");

  // One response, one message: reasoning (encrypted), text and two parallel
  // calls; its token_count is its usage.
  Ev &first = ev.by_id(id(kSid, 10));
  CHECK(first.str("type") == "AssistantMessageCreated");
  CHECK(first.payload()["provenance"]["last_line"].get_int64().value() == 15);
  simdjson::dom::array content = first.payload()["content"].get_array().value();
  REQUIRE(content.size() == 4);
  CHECK(content.at(0)["type"].get_string().value() == "thinking");
  CHECK(content.at(0)["provider"].get_string().value() == "openai");
  CHECK(content.at(0)["text"].get_string().value() == "**Looking at the cache path**");
  CHECK(std::string_view(content.at(0)["encrypted_content"].get_string().value())
            .starts_with("gAAAAABpAXSqk3Yl0r1_encrypted_reasoning_one_"));
  CHECK(content.at(1)["text"].get_string().value() == "I'll read the store and run its tests.");
  CHECK(content.at(2)["id"].get_string().value() == "call_read_store");
  CHECK(content.at(2)["name"].get_string().value() == "shell");
  CHECK(content.at(2)["args"]["workdir"].get_string().value() == "/home/ana/src/kv");
  CHECK(content.at(3)["id"].get_string().value() == "call_run_tests");
  CHECK(first.pstr("provider") == "openai");
  CHECK(first.pstr("model") == "gpt-5-codex");
  simdjson::dom::element usage = first.payload()["usage"].value();
  CHECK(usage["input_tokens"].get_int64().value() == 5210 - 4096);
  CHECK(usage["cache_read_tokens"].get_int64().value() == 4096);
  CHECK(usage["output_tokens"].get_int64().value() == 388);
  CHECK(usage["reasoning_tokens"].get_int64().value() == 256);
  CHECK(usage["provider_usage"]["cached_input_tokens"].get_int64().value() == 4096);

  // Results: a shell JSON result, a failed run (exit code 101).
  Ev &read = ev.by_id(id(kSid, 16));
  CHECK(read.str("type") == "ToolCallFinished");
  CHECK(read.pstr("tool_call_id") == "call_read_store");
  CHECK(read.pstr("name") == "shell");
  CHECK(read.payload()["exit_code"].get_int64().value() == 0);
  CHECK(read.payload()["duration_ms"].get_int64().value() == 100);
  Ev &failed = ev.by_id(id(kSid, 17));
  CHECK(failed.str("type") == "ToolCallFailed");
  CHECK(failed.payload()["is_error"].get_bool().value());
  CHECK(failed.payload()["exit_code"].get_int64().value() == 101);
  CHECK(failed.payload()["duration_ms"].get_int64().value() == 2400);

  // A freeform tool's input is a string argument; a local shell call's action its args.
  Ev &patch = ev.by_id(id(kSid, 18));
  simdjson::dom::element call = patch.payload()["content"].at(1).value();
  CHECK(call["name"].get_string().value() == "apply_patch");
  CHECK(std::string_view(call["args"].get_string().value()).starts_with("*** Begin Patch"));
  CHECK(ev.by_id(id(kSid, 21)).pstr("tool_call_id") == "call_patch");
  CHECK(ev.by_id(id(kSid, 22)).str("type") == "codex.event_msg.patch_apply_end");
  Ev &local = ev.by_id(id(kSid, 23));
  simdjson::dom::array local_blocks = local.payload()["content"].get_array().value();
  CHECK(local_blocks.at(0)["name"].get_string().value() == "local_shell");
  CHECK(local_blocks.at(0)["args"]["command"].at(0).get_string().value() == "cargo");
  CHECK(ev.by_id(id(kSid, 24)).str("type") == "ToolCallFinished");
  // The provider-side search, answered at once; the message after it, its usage.
  Ev &search = ev.by_id(id(kSid, 25));
  simdjson::dom::array search_blocks = search.payload()["content"].get_array().value();
  CHECK(search_blocks.at(0)["id"].get_string().value() == "ws_L25");
  CHECK(search_blocks.at(0)["name"].get_string().value() == "web_search");
  CHECK(search_blocks.at(1)["type"].get_string().value() == "text");
  CHECK(search.payload()["usage"]["cache_read_tokens"].get_int64().value() == 6144);
  CHECK(ev.by_id(id(kSid, 25, "-r")).pstr("tool_call_id") == "ws_L25");

  // A later turn_context's model; an aborted turn cancels its call.
  Ev &cancel = ev.by_id(id(kSid, 33, "-c1"));
  CHECK(cancel.str("type") == "ToolCallCancelled");
  CHECK(cancel.pstr("tool_call_id") == "call_interrupted");
  CHECK(cancel.pstr("reason").find("interrupted") != std::string::npos);
  CHECK(ev.by_id(id(kSid, 32)).pstr("model") == "gpt-5.1-codex");
  // A result's image.
  Ev &with_image = ev.by_id(id(kSid, 38));
  CHECK(with_image.pstr("output") == "test result: ok. 13 passed");
  CHECK(with_image.payload()["content"].at(0)["mime_type"].get_string().value() == "image/png");

  // The last response: text, a generated image, a call still running (left pending).
  Ev &last = ev.by_id(id(kSid, 39));
  simdjson::dom::array last_blocks = last.payload()["content"].get_array().value();
  REQUIRE(last_blocks.size() == 3);
  CHECK(last_blocks.at(1)["type"].get_string().value() == "image");
  CHECK(last_blocks.at(2)["id"].get_string().value() == "call_still_running");
  for (const char *t : {"ToolCallFinished", "ToolCallFailed", "ToolCallCancelled"})
    for (Ev *e : ev.of_type(t)) CHECK(e->pstr("tool_call_id") != "call_still_running");

  // Unknown record types: kept, and counted.
  CHECK(ev.by_id(id(kSid, 40)).str("type") == "codex.world_state");
  CHECK(ev.by_id(id(kSid, 40))
            .payload()["record"]["payload"]["files"]["src/store.rs"]
            .get_string()
            .value() == "modified");
  CHECK(p.unknown ==
        std::map<std::string, int64_t>{{"event_msg.mcp_startup_progress", 1}, {"world_state", 1}});
  CHECK(ev.by_id(id(kSid, 6)).str("type") == "codex.response_item.ghost_snapshot");
  CHECK(ev.by_id(id(kSid, 5)).str("type") == "codex.turn_context");
}

TEST_CASE("codex: the same bytes give the same drafts") {
  std::string bytes = read_file(kFull);
  Parsed a = parse(bytes, kFull), b = parse(bytes, kFull);
  REQUIRE(a.events.size() == b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i)
    CHECK(a.events[i].event_json == b.events[i].event_json);
  CHECK(a.sessions[0].create_json == b.sessions[0].create_json);
}

TEST_CASE("codex: a session appended to a database verifies and compiles into every format") {
  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  Parsed p = parse_fixture(kFull);
  append_all(db, p);
  // Twice: the same ids with the same content change nothing.
  std::string before = test::export_all(db);
  append_all(db, p);
  CHECK(test::export_all(db) == before);
  CHECK(test::field(db.verify(kSid), "ok") == "true");

  std::string state = db.state(kSid, std::nullopt, std::nullopt);
  CHECK(state.find(R"("user_goal":{"text":")" + escaped(kFirstPrompt) + "\"") != std::string::npos);

  // The last call is still running: its result comes with the request.
  for (const char *format : kFormats) {
    INFO(format);
    std::string req = std::string(R"({"session_id":")") + kSid +
                      R"(","max_tokens":200000,"format":")" + format +
                      R"(","tool_results":[{"tool_call_id":"call_still_running","output":"ok"}]})";
    std::string out = db.compile(req);
    CHECK(occurrences(out, "only run the store tests") == 1);
    // Encrypted reasoning goes back to the Responses API only, in its place
    // and without an id, as Codex sends it (the AI SDK's OpenAI provider
    // takes a reasoning part by its itemId only).
    std::string f = format;
    bool kept = f == "openai.responses" || f == "canonical";
    CHECK(occurrences(out, "gAAAAABpAXSqk3Yl0r1_encrypted_reasoning_one_") == (kept ? 1 : 0));
    if (f == "openai.responses")
      CHECK(out.find(
                R"({"type":"reasoning","summary":[{"type":"summary_text","text":)"
                R"("**Looking at the cache path**"}],"encrypted_content":"gAAAAABpAXSqk3Yl0r1)") !=
            std::string::npos);
    if (std::string(format) == "canonical") {
      CHECK(occurrences(out, escaped(kFirstPrompt).substr(0, 60)) == 1);
      test::Bundle b(out);
      test::check_bundle(b);
    }
  }
}

TEST_CASE("codex: compactions compile as Codex resumes, with and without a replacement history") {
  Parsed p = parse_fixture(kCompaction);
  Events ev(p);
  INFO(ev.types());
  const std::string sid = "codex-019a3b10-7c2e-7f31-9a0d-2c5be81f4e77";
  auto compactions = ev.of_type("CompactionCompleted");
  REQUIRE(compactions.size() == 2);

  // Codex's own compaction: the summary, then the user's messages it keeps.
  Ev &local = *compactions[0];
  CHECK(local.str("id") == id(sid, 12));
  CHECK(local.pstr("first_kept_event_id") == id(sid, 12));
  CHECK(local.pstr("summary").find("quotes them; tests not run yet") != std::string::npos);
  CHECK(local.payload()["summarizer"]["kind"].get_string().value() == "foreign");
  CHECK(local.payload()["summarizer"]["agent"].get_string().value() == "codex");
  CHECK(local.payload()["range"]["from_event_id"].get_string().value() == id(sid, 4));
  CHECK(local.payload()["tokens_before"].get_int64().value() == 3460);
  CHECK(ev.by_id(id(sid, 12, "-c1")).pstr("tool_call_id") == "call_pending_at_compaction");
  CHECK(ev.by_id(id(sid, 12, "-h1")).pstr("text") ==
        "Quote CSV fields that contain commas in the exporter.");
  CHECK(ev.by_id(id(sid, 12, "-h2")).pstr("text") == "Also quote fields with newlines.");
  CHECK(ev.by_id(id(sid, 12, "-h2")).pstr("source") == "compaction_user_message");
  CHECK(ev.by_id(id(sid, 12, "-h2")).pstr("kind") == "context");

  // A provider-side compaction: its replacement history, item by item.
  Ev &remote = *compactions[1];
  CHECK(remote.str("id") == id(sid, 17));
  CHECK(remote.pstr("first_kept_event_id") == id(sid, 17));
  CHECK(ev.by_id(id(sid, 17, "-h1")).pstr("source") == "environment_context");
  CHECK(ev.by_id(id(sid, 17, "-h3")).pstr("text") == "Run the tests now.");
  CHECK(ev.by_id(id(sid, 17, "-h4")).str("type") == "codex.replacement_history.compaction");
  CHECK(ev.by_id(id(sid, 17, "-h5")).str("type") == "codex.replacement_history.ghost_snapshot");
  CHECK(ev.of_type("UserPromptSubmitted").size() == 4);
  CHECK(p.unknown.empty());

  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  append_all(db, p);
  CHECK(test::field(db.verify(sid), "ok") == "true");
  for (const char *format : kFormats) {
    INFO(format);
    std::string out =
        db.compile(std::string(R"({"session_id":")") + sid +
                   R"(","max_tokens":100000,"continuation":true,"format":")" + format + "\"}");
    CHECK(occurrences(out, "Release it as 0.4.1.") == 1);
    // Kept by the provider's compaction: sent again, as context.
    CHECK(occurrences(out, "Run the tests now.") == 1);
    // Compacted away twice over.
    CHECK(occurrences(out, "Also quote fields with newlines.") == 0);
  }
  std::string state = db.state(sid, std::nullopt, std::nullopt);
  CHECK(state.find(
            R"("user_goal":{"text":"Quote CSV fields that contain commas in the exporter.")") !=
        std::string::npos);
}

TEST_CASE("codex: the layout before the {timestamp, type, payload} wrapper") {
  Parsed p = parse_fixture(kOld);
  Events ev(p);
  INFO(ev.types());
  const std::string sid = "codex-5973b6c0-94b8-487b-a530-2aeb6098ae0e";
  REQUIRE(p.sessions.size() == 1);
  CHECK(p.sessions[0].id == sid);
  Ev start(p.sessions[0].create_json);
  CHECK(start.doc["ts"].get_int64().value() == 1746638661123);
  CHECK(start.pstr("repo") == "https://github.com/ana/notes.git");
  CHECK(ev.by_id(id(sid, 1, "-u")).pstr("kind") == "instructions");
  CHECK(ev.by_id(id(sid, 1, "-u")).pstr("source") == "user_instructions");
  CHECK(ev.by_id(id(sid, 2)).str("type") == "codex.state");
  CHECK(ev.by_id(id(sid, 3)).pstr("source") == "environment_context");
  CHECK(ev.by_id(id(sid, 4)).pstr("text") == "List the markdown files that have no title.");
  Ev &msg = ev.by_id(id(sid, 5));
  simdjson::dom::array blocks = msg.payload()["content"].get_array().value();
  CHECK(blocks.at(0)["id"].get_string().value() == "rs_6822d5f0a48481919b2b0c5c");
  CHECK(blocks.at(0)["summary"].at(0).get_string().value() ==
        "Scanning for files without a heading");
  CHECK(blocks.at(1)["id"].get_string().value() == "call_old_grep");
  Ev &out = ev.by_id(id(sid, 7));
  CHECK(out.str("type") == "ToolCallFinished");
  CHECK(out.payload()["duration_ms"].get_int64().value() == 20);
  CHECK(ev.by_id(id(sid, 9)).payload()["content"].at(0)["text"].get_string().value() ==
        "Two files have no title: draft.md and todo.md.");
  for (auto &e : ev.all) CHECK(e->doc["ts"].get_int64().value() == 1746638661123);
  CHECK(p.unknown.empty());

  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  append_all(db, p);
  CHECK(test::field(db.verify(sid), "ok") == "true");
  for (const char *format : kFormats)
    db.compile(std::string(R"({"session_id":")") + sid +
               R"(","max_tokens":100000,"continuation":true,"format":")" + format + "\"}");
}

TEST_CASE("codex: a malformed line is an error naming the file and the line") {
  std::string msg;
  Code code = test::code_of([&] { parse_fixture(kMalformed); });
  msg = test::message_of([&] { parse_fixture(kMalformed); });
  CHECK(code == Code::kInvalidJson);
  CHECK(msg.find(kMalformed + ":3:") == 0);
  // A line that is JSON but no rollout record.
  std::string bad = read_file(kOld) + "{\"summary\":\"no type\"}\n";
  msg = test::message_of([&] { parse(bad, "x.jsonl"); });
  CHECK(msg.find("x.jsonl:11:") == 0);
  CHECK(test::code_of([&] { parse(bad, "x.jsonl"); }) == Code::kInvalidArg);
  // A field of the wrong type is named with its path.
  std::string wrong = read_file(kOld) +
                      R"({"type":"function_call","name":"shell","arguments":7,"call_id":"c"})"
                      "\n";
  msg = test::message_of([&] { parse(wrong, "y.jsonl"); });
  CHECK(msg.find("y.jsonl:11:") == 0);
  CHECK(msg.find("arguments must be a string") != std::string::npos);
}

TEST_CASE("codex: a torn last line waits for the next pass") {
  std::string bytes = read_file(kTorn);
  REQUIRE(bytes.back() != '\n');
  Parsed p = parse(bytes, kTorn);
  size_t last_nl = bytes.rfind('\n');
  CHECK(p.bytes_consumed == static_cast<int64_t>(last_nl + 1));
  CHECK(p.lines_consumed == std::count(bytes.begin(), bytes.end(), '\n'));
  for (const Draft &d : p.events) CHECK(d.last_line <= p.lines_consumed);
  // Completed, the line is read.
  Parsed done = parse(bytes + "\"}]}}\n", kTorn);
  CHECK(done.lines_consumed == p.lines_consumed + 1);
}

TEST_CASE("codex: a live file holds back a response that may still grow, then resumes") {
  std::string bytes = read_file(kFull);
  // The first 13 lines: the first response has its reasoning, text and one call.
  size_t cut = 0;
  for (int i = 0; i < 13; ++i) cut = bytes.find('\n', cut) + 1;
  Parsed live = parse(bytes.substr(0, cut), kFull, 0, false);
  CHECK(live.lines_consumed == 9); // the response starts on line 10
  size_t nine = 0;
  for (int i = 0; i < 9; ++i) nine = bytes.find('\n', nine) + 1;
  CHECK(live.bytes_consumed == static_cast<int64_t>(nine));
  for (const Draft &d : live.events) CHECK(d.last_line <= 9);
  Parsed full = parse(bytes, kFull);
  // The next pass, from where the first stopped, gives what a whole read gives.
  Parsed next = parse(bytes, kFull, live.lines_consumed);
  std::vector<std::string> joined, whole;
  for (const Draft &d : live.events) joined.push_back(d.event_json);
  for (const Draft &d : next.events)
    if (d.last_line > live.lines_consumed) joined.push_back(d.event_json);
  for (const Draft &d : full.events) whole.push_back(d.event_json);
  CHECK(joined == whole);
}

TEST_CASE("codex: no message groups lines on both sides of an earlier pass") {
  std::string bytes = read_file(kFull);
  // Line 12 (an echo) was imported: the response of lines 10..15 is cut there.
  Parsed p = parse(bytes, kFull, 12);
  Events ev(p);
  for (const Draft &d : p.events) CHECK((d.last_line <= 12 || d.first_line > 12));
  CHECK(ev.by_id(id(kSid, 10)).payload()["provenance"]["last_line"].get_int64().value() == 11);
  simdjson::dom::array rest = ev.by_id(id(kSid, 13)).payload()["content"].get_array().value();
  CHECK(rest.size() == 2);
  CHECK(rest.at(0)["id"].get_string().value() == "call_read_store");
  CHECK(rest.at(1)["id"].get_string().value() == "call_run_tests");
}

TEST_CASE("codex: a long session") {
  // 2,000+ lines: turns of a prompt, a call, its output, an answer and the
  // echoes and usage Codex writes around them.
  const std::string uuid = "019a6e43-2d5f-7a64-8d30-5f8eb14c7baa";
  std::string file = "sessions/2025/11/05/rollout-2025-11-05T08-00-00-" + uuid + ".jsonl";
  std::string bytes =
      R"({"timestamp":"2025-11-05T08:00:00.000Z","type":"session_meta","payload":{"id":")" + uuid +
      R"(","timestamp":"2025-11-05T08:00:00.000Z","cwd":"/w","originator":"codex_cli_rs","cli_version":"0.60.0","source":"exec","model_provider":"openai"}})"
      "\n";
  const int kTurns = 260;
  for (int t = 0; t < kTurns; ++t) {
    std::string n = std::to_string(t);
    char ts[32];
    std::snprintf(ts, sizeof ts, "2025-11-05T%02d:%02d:%02d.000Z", 8 + t / 3600, t / 60 % 60,
                  t % 60);
    auto line = [&](const char *type, const std::string &payload) {
      bytes += std::string(R"({"timestamp":")") + ts + R"(","type":")" + type + R"(","payload":)" +
               payload + "}\n";
    };
    auto item = [&](const std::string &payload) { line("response_item", payload); };
    line("turn_context", R"({"cwd":"/w","approval_policy":"never",)"
                         R"("sandbox_policy":{"type":"read-only"},"model":"gpt-5-codex"})");
    item(R"({"type":"message","role":"user","content":[{"type":"input_text","text":"step )" + n +
         ": count the lines of file " + n + R"(.txt"}]})");
    line("event_msg", R"({"type":"user_message","message":"step )" + n + R"("})");
    item(R"({"type":"reasoning","summary":[{"type":"summary_text","text":"counting"}],)"
         R"("encrypted_content":"gAAAA)" +
         n + R"("})");
    item(R"({"type":"function_call","name":"shell","call_id":"call_)" + n +
         R"(","arguments":"{\"command\":[\"wc\",\"-l\",\")" + n + R"(.txt\"]}"})");
    line("event_msg", R"({"type":"token_count","info":{"last_token_usage":{"input_tokens":)" +
                          std::to_string(1000 + t * 40) +
                          R"(,"cached_input_tokens":900,"output_tokens":30}}})");
    item(R"({"type":"function_call_output","call_id":"call_)" + n +
         R"(","output":"{\"output\":\")" + n +
         R"( lines\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.01}}"})");
    item(R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"File )" +
         n + " has " + n + R"( lines."}]})");
  }
  Parsed p = parse(bytes, file);
  CHECK(p.lines_consumed == 1 + kTurns * 8);
  CHECK(p.lines_consumed >= 2000);
  Events ev(p);
  CHECK(ev.of_type("UserPromptSubmitted").size() == kTurns);
  CHECK(ev.of_type("AssistantMessageCreated").size() == 2 * kTurns);
  CHECK(ev.of_type("ToolCallFinished").size() == kTurns);

  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  append_all(db, p);
  const std::string sid = "codex-" + uuid;
  CHECK(test::field(db.verify(sid), "ok") == "true");
  std::string out = db.compile(std::string(R"({"session_id":")") + sid +
                               R"(","max_tokens":4000,"continuation":true})");
  test::Bundle b(out);
  test::check_bundle(b, true);
  CHECK(b.used() <= 4000);

  // Compacted by ctxdb, it compiles below its budget with the summary first.
  std::string done = db.compact(sid, R"({"keep_recent_tokens":1500})", nullptr);
  INFO(done.substr(0, 400));
  REQUIRE(test::field(done, "status") == "compacted");
  CHECK(std::stoll(test::field(done, "tokens_after")) <
        std::stoll(test::field(done, "tokens_before")));
  test::Bundle after(db.compile(std::string(R"({"session_id":")") + sid +
                                R"(","max_tokens":6000,"continuation":true})"));
  test::check_bundle(after, true);
  CHECK(after.used() <= 6000);
  CHECK(test::field(db.verify(sid), "ok") == "true");
}

TEST_CASE("codex: what a shell result says of its run") {
  const std::string meta =
      R"({"timestamp":"2025-11-06T08:00:00.000Z","type":"session_meta","payload":{"id":"s1",)"
      R"("timestamp":"2025-11-06T08:00:00.000Z","cwd":"/w","originator":"o","cli_version":"1"}})"
      "\n";
  auto run = [&](const std::string &output_json) {
    std::string bytes =
        meta +
        R"({"timestamp":"2025-11-06T08:00:01.000Z","type":"response_item","payload":)"
        R"({"type":"function_call","name":"exec_command","arguments":"{}","call_id":"c1"}})"
        "\n"
        R"({"timestamp":"2025-11-06T08:00:02.000Z","type":"response_item","payload":)"
        R"({"type":"function_call_output","call_id":"c1","output":)" +
        output_json + "}}\n";
    Parsed p = parse(bytes, "rollout-x.jsonl");
    return std::make_unique<Ev>(p.events.back().event_json);
  };
  auto exec = run(R"("Chunk ID: 1a2b\nWall time: 0.2500 seconds\nProcess exited with code 2\n)"
                  R"(Original token count: 3\nOutput:\nExit code: 0\n")");
  CHECK(exec->str("type") == "ToolCallFailed");
  CHECK(exec->payload()["exit_code"].get_int64().value() == 2);
  CHECK(exec->payload()["duration_ms"].get_int64().value() == 250);
  auto plain = run(R"("Exit code: 0\nWall time: 1 seconds\nOutput:\nok\n")");
  CHECK(plain->str("type") == "ToolCallFinished");
  CHECK(plain->payload()["exit_code"].get_int64().value() == 0);
  CHECK(plain->payload()["duration_ms"].get_int64().value() == 1000);
  // Text that only mentions an exit code says nothing of the run.
  auto prose = run(R"("the docs say: Exit code: 3 means busy")");
  CHECK(prose->str("type") == "ToolCallFinished");
  CHECK_FALSE(prose->has("exit_code"));
  auto failed = run(R"({"content":"denied by the sandbox","success":false})");
  CHECK(failed->str("type") == "ToolCallFailed");
  CHECK(failed->pstr("output") == "denied by the sandbox");
  CHECK(failed->payload()["is_error"].get_bool().value());
}

TEST_CASE("codex: the fixture tree through the importer, twice") {
  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  std::string opts = R"({"format":"codex","path":")" + (kRoot / "sessions").string() + R"("})";
  simdjson::dom::parser p;
  std::string first = db.transcript_import(opts);
  INFO(first);
  simdjson::dom::element report = p.parse(first).value();
  simdjson::dom::array sessions = report["sessions"].get_array().value();
  REQUIRE(sessions.size() == 8);
  std::map<std::string, std::string> status;
  for (simdjson::dom::element s : sessions)
    status[std::string(s["session_id"].get_string().value())] =
        std::string(s["status"].get_string().value());
  CHECK(status[kSid] == "imported");
  CHECK(status["codex-019a3b10-7c2e-7f31-9a0d-2c5be81f4e77"] == "imported");
  CHECK(status["codex-5973b6c0-94b8-487b-a530-2aeb6098ae0e"] == "imported");
  CHECK(status["codex-019a5d32-1c4e-7f53-9c2f-4e7da03b6a99"] == "imported"); // up to its tear
  CHECK(status[kRollbackSid] == "imported");
  simdjson::dom::element bad = sessions.at(3);
  CHECK(bad["status"].get_string().value() == "failed");
  CHECK(std::string_view(bad["error"].get_string().value()).find(kMalformed + ":3:") !=
        std::string_view::npos);
  CHECK(sessions.at(1)["unknown"]["world_state"].get_int64().value() == 1);
  CHECK(report["failed"].get_int64().value() == 1);
  CHECK(test::field(db.verify(std::nullopt), "ok") == "true");
  CHECK(test::field(db.rebuild(R"({"check":true})"), "identical") == "true");

  std::string log = test::export_all(db);
  std::string again = db.transcript_import(opts);
  INFO(again);
  simdjson::dom::parser p2;
  CHECK(p2.parse(again)["unchanged"].get_int64().value() == 7);
  CHECK(test::export_all(db) == log);
}

TEST_CASE("codex: a subagent's file names its parent; a file with no meta its own name") {
  std::string child =
      R"({"timestamp":"2025-11-07T08:00:00.000Z","type":"session_meta","payload":{"id":"c-1",)"
      R"("timestamp":"2025-11-07T08:00:00.000Z","cwd":"/w","originator":"o","cli_version":"1",)"
      R"("source":{"subagent":{"thread_spawn":{"parent_thread_id":"p-1","depth":1}}}}})"
      "\n";
  Parsed p = parse(child, "rollout-x.jsonl");
  REQUIRE(p.sessions.size() == 1);
  CHECK(p.sessions[0].id == "codex-c-1");
  CHECK(p.sessions[0].parent_session_id == "codex-p-1");
  CHECK(Ev(p.sessions[0].create_json).pstr("parent_session_id") == "codex-p-1");

  // Its first records lost: the session id is the one in the file name.
  std::string headless =
      R"({"timestamp":"2025-11-07T08:00:01.000Z","type":"response_item","payload":{"type":"message",)"
      R"("role":"user","content":[{"type":"input_text","text":"hi"}]}})"
      "\n";
  Parsed q =
      parse(headless, "s/rollout-2025-11-07T08-00-00-019a7f54-3e60-7b75-9e41-6f9fc25d8cbb.jsonl");
  REQUIRE(q.sessions.size() == 1);
  CHECK(q.sessions[0].id == "codex-019a7f54-3e60-7b75-9e41-6f9fc25d8cbb");
  CHECK(q.events.size() == 1);
  std::string msg = test::message_of([&] { parse(headless, "notes.jsonl"); });
  CHECK(msg.find("notes.jsonl:1: a Codex rollout starts with its session_meta") == 0);
}

TEST_CASE("codex: a subagent starts at its spawn_agent result and returns at its wait") {
  const std::string dir11 = "sessions/2025/11/06/";
  const std::string parent_file =
      dir11 + "rollout-2025-11-06T09-00-00-019a8a10-5e21-7c43-9b7d-8f0c2ad14e63.jsonl";
  const std::string parent = "codex-019a8a10-5e21-7c43-9b7d-8f0c2ad14e63";
  const std::string child = "codex-019a8a11-0b6e-7d14-a2c3-1e5f7b9d3c80";
  Parsed p = parse_fixture(parent_file);
  Events ev(p);
  INFO(ev.types());
  Ev &started = ev.by_id(id(parent, 10, "-s"));
  CHECK(started.str("type") == "SubagentStarted");
  CHECK(started.pstr("child_session_id") == child);
  CHECK(started.pstr("tool_call_id") == "call_spawn_tests");
  CHECK(started.pstr("task") == "Run the parser tests and list the failing ones.");
  CHECK(started.str("parent_id") == id(parent, 10)); // after the spawn's result
  Ev &finished = ev.by_id(id(parent, 14, "-f1"));
  CHECK(finished.str("type") == "SubagentFinished");
  CHECK(finished.pstr("child_session_id") == child);
  CHECK(finished.pstr("summary") == "2 failures: test_unicode_escape, test_deep_nesting.");
  CHECK(ev.of_type("SubagentFinished").size() == 1);
  CHECK(p.unknown.empty());

  test::TempDir dir;
  Engine db(dir.file("c.ctxdb"), "");
  std::string report =
      db.transcript_import(R"({"format":"codex","path":")" + (kRoot / dir11).string() + R"("})");
  INFO(report);
  CHECK(test::field(report, "imported") == "2");
  CHECK(test::field(db.session_get(child), "parent_session_id") == parent);
  CHECK(test::field(db.verify(std::nullopt), "ok") == "true");
  CHECK(test::field(db.rebuild(R"({"check":true})"), "identical") == "true");
  for (const std::string &sid : {parent, child})
    for (const char *format : kFormats) {
      INFO(sid << " " << format);
      std::string out =
          db.compile(R"({"session_id":")" + sid +
                     R"(","max_tokens":100000,"continuation":true,"format":")" + format + "\"}");
      CHECK(occurrences(out, "test_deep_nesting") >= 1);
      if (std::string(format) != "canonical") test::provider_checks::check_provider(out, format);
    }
}

TEST_CASE("codex: a subagent's notification returns it once; other agents are not children") {
  auto line = [](const std::string &type, const std::string &payload) {
    return R"({"timestamp":"2025-11-08T08:00:00.000Z","type":")" + type + R"(","payload":)" +
           payload + "}\n";
  };
  auto notification = [&](const std::string &agent, const std::string &status) {
    return line("response_item",
                R"({"type":"message","role":"user","content":[{"type":"input_text","text":)"
                R"("<subagent_notification>\n{\"agent_id\":\")" +
                    agent + R"(\",\"status\":)" + status + R"(}\n</subagent_notification>"}]})");
  };
  std::string bytes =
      line("session_meta", R"({"id":"p-2","timestamp":"2025-11-08T08:00:00.000Z","cwd":"/w"})") +
      line("response_item", R"({"type":"message","role":"user","content":[{"type":"input_text",)"
                            R"("text":"fix it"}]})") +
      line("response_item", R"({"type":"function_call","name":"spawn_agent","arguments":)"
                            R"("{\"message\":\"look\"}","call_id":"call_s"})") +
      line("response_item", R"({"type":"function_call_output","call_id":"call_s","output":)"
                            R"("{\"agent_id\":\"c-2\",\"nickname\":null}"})") +
      notification("c-2", R"(\"running\")") + notification("c-9", R"({\"completed\":\"x\"})") +
      notification("c-2", R"({\"errored\":\"quota\"})") +
      notification("c-2", R"({\"completed\":\"late\"})");
  Parsed p = parse(bytes, "rollout-p.jsonl");
  Events ev(p);
  INFO(ev.types());
  CHECK(ev.by_id(id("codex-p-2", 4, "-s")).pstr("child_session_id") == "codex-c-2");
  auto finished = ev.of_type("SubagentFinished");
  REQUIRE(finished.size() == 1); // not while running, not for c-9, once
  CHECK(finished[0]->str("id") == id("codex-p-2", 7, "-f1"));
  CHECK(finished[0]->pstr("summary") == "the subagent ended: errored: quota");
  CHECK(ev.by_id(id("codex-p-2", 5)).pstr("source") == "subagent_notification");
}

TEST_CASE("codex: which files of a tree are sessions") {
  CHECK(transcript::is_codex_rollout(kFull));
  CHECK(transcript::is_codex_rollout(
      "rollout-2025-05-07T17-24-21-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl"));
  CHECK_FALSE(transcript::is_codex_rollout("sessions/2025/10/29/notes.jsonl"));
  CHECK_FALSE(transcript::is_codex_rollout("history.jsonl"));
}

} // namespace transcript_codex_test
