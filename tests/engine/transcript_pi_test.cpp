// Pi session files (tests/fixtures/transcripts/pi/, see its README) read
// as drafts: every entry type, the tree with its active path first, foreign
// compactions, interrupted turns, old file versions and bad input; then
// the drafts appended to a real database, verified and compiled.
#include "bundle_checks.hpp"
#include "engine.hpp"
#include "error.hpp"
#include "provider_checks.hpp"
#include "test_util.hpp"
#include "transcript/transcript.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace transcript_pi_test {

using namespace ctxdb;
using namespace ctxdb::transcript;
using simdjson::dom::element;
using test::code_of;
using test::message_of;

namespace {

const std::filesystem::path kSessions =
    std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" / "transcripts" /
    "pi" / "sessions";

const char kFull[] =
    "--home-dev-shop--/2025-01-10T09-00-00-000Z_5f0c2a9e-1b7d-4c3e-9a41-2d6e8f7b1c01.jsonl";
const char kKeepsNothing[] =
    "--home-dev-shop--/2025-01-10T10-00-00-000Z_7a3e9b12-0c44-4d8a-b5e1-6f2a9c0d3e02.jsonl";
const char kTorn[] =
    "--home-dev-shop--/2025-01-12T16-40-00-000Z_3e4f5061-7283-494a-bdce-3f4a5b6c7d06.jsonl";
const char kV1[] =
    "--home-dev-legacy--/2024-10-27T03-33-20-000Z_0b1d2c3e-4f50-4617-8a9b-0c1d2e3f4a03.jsonl";
const char kV2[] =
    "--home-dev-legacy--/2024-11-30T20-53-20-000Z_1c2d3e4f-5061-4728-9bac-1d2e3f4a5b04.jsonl";
const char kMalformed[] =
    "--home-dev-broken--/2025-01-11T12-53-20-000Z_2d3e4f50-6172-4839-acbd-2e3f4a5b6c05.jsonl";

const char kFullId[] = "pi-5f0c2a9e-1b7d-4c3e-9a41-2d6e8f7b1c01";

std::string read_file(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "missing fixture " << p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Parsed parse_bytes(const std::string &bytes, const std::string &file) {
  ParseOptions o;
  o.file = file;
  return parse_pi(bytes, o);
}

Parsed parse_fixture(const char *name) { return parse_bytes(read_file(kSessions / name), name); }

// The drafts, parsed, by event id, and their ids in append order.
struct Drafts {
  explicit Drafts(const Parsed &p) : parsed(p) {
    parsers.resize(p.events.size());
    for (size_t i = 0; i < p.events.size(); ++i) {
      element e = parsers[i].parse(p.events[i].event_json).value();
      std::string id(e["id"].get_string().value());
      CHECK_MESSAGE(by_id.emplace(id, e).second, "two drafts with the id " << id);
      order.push_back(id);
    }
  }
  element operator[](const std::string &id) const {
    auto it = by_id.find(id);
    REQUIRE_MESSAGE(it != by_id.end(), "no draft " << id);
    return it->second;
  }
  bool has(const std::string &id) const { return by_id.count(id) == 1; }
  size_t position(const std::string &id) const {
    auto it = std::find(order.begin(), order.end(), id);
    REQUIRE(it != order.end());
    return static_cast<size_t>(it - order.begin());
  }
  const Parsed &parsed;
  std::vector<simdjson::dom::parser> parsers;
  std::map<std::string, element> by_id;
  std::vector<std::string> order;
};

std::string str(element e, const char *key) {
  std::string_view s;
  if (e[key].get(s)) return "";
  return std::string(s);
}
std::string str(simdjson::simdjson_result<element> e) {
  std::string_view s;
  if (e.get(s)) return "";
  return std::string(s);
}
int64_t num(simdjson::simdjson_result<element> e) {
  int64_t n = -1;
  if (e.get(n)) return -1;
  return n;
}

std::string full_id(const std::string &entry) { return std::string(kFullId) + "-" + entry; }

// Every session and draft, appended as the importer does: the engine
// checks each core payload, the tree and the tool-call pairs.
void load(Engine &db, const Parsed &p) {
  for (const DraftSession &s : p.sessions) db.session_create(s.create_json);
  for (const Draft &d : p.events) {
    INFO(d.event_json);
    db.append(d.session_id, d.event_json);
  }
}

// verify passes and every projection rebuilds from the log as it is.
void check_consistent(Engine &db) {
  CHECK(test::field(db.verify(std::nullopt), "ok") == "true");
  CHECK(test::field(db.rebuild(R"({"check":true})"), "identical") == "true");
}

const char *const kFormats[] = {
    "canonical", "openai.chat", "openai.responses", "anthropic.messages", "gemini.generate_content",
    "ai.sdk"};

std::string compile_request(const std::string &session, int64_t budget, const char *format) {
  return R"({"session_id":")" + session + R"(","max_tokens":)" + std::to_string(budget) +
         R"(,"request":"What next?","format":")" + format + "\"}";
}

// A compile of the session's default branch with a new request (Pi
// resumes waiting for one): the bundle keeps every invariant, and each
// provider's request passes that provider's documented rules.
std::string compile_everywhere(Engine &db, const std::string &session, int64_t budget = 200000) {
  std::string canonical = db.compile(compile_request(session, budget, "canonical"));
  test::Bundle b(canonical);
  test::check_bundle(b);
  for (const char *format : test::provider_checks::kProviderFormats) {
    INFO(format);
    std::string out;
    CHECK_NOTHROW(out = db.compile(compile_request(session, budget, format)));
    test::provider_checks::check_provider(out, format);
  }
  return canonical;
}

// The events a compile sends, in order: what Pi's buildSessionContext
// gives the model on resume (the summary first, then the kept messages).
std::vector<std::string> sent_events(const std::string &bundle) {
  simdjson::dom::parser p;
  std::vector<std::string> out;
  for (element s : p.parse(bundle).value()["segments"].get_array()) {
    std::string kind = str(s, "kind");
    if (kind != "summary" && kind != "message") continue;
    out.push_back(str(s["sources"].at(0)["id"]));
  }
  return out;
}

} // namespace

TEST_CASE("pi: the header is the session; its id, cwd and first model") {
  Parsed p = parse_fixture(kFull);
  REQUIRE(p.sessions.size() == 1);
  CHECK(p.sessions[0].id == kFullId);
  CHECK(p.sessions[0].parent_session_id.empty());
  simdjson::dom::parser parser;
  element s = parser.parse(p.sessions[0].create_json).value();
  CHECK(str(s, "id") == kFullId);
  CHECK(str(s, "event_id") == std::string(kFullId) + "-start");
  CHECK(num(s["ts"]) == 1736499600000);
  CHECK(str(s["payload"]["agent_id"]) == "pi");
  CHECK(str(s["payload"]["model"]) == "claude-sonnet-4-5");
  CHECK(str(s["payload"]["cwd"]) == "/home/dev/shop");
  CHECK(num(s["payload"]["source_version"]) == 3);
  CHECK(str(s["payload"]["provenance"]["format"]) == "pi");
  CHECK(num(s["payload"]["provenance"]["line"]) == 1);
  CHECK(str(s["payload"]["provenance"]["record_id"]) == "5f0c2a9e-1b7d-4c3e-9a41-2d6e8f7b1c01");
  CHECK(p.lines_consumed == 32);
  CHECK(p.bytes_consumed == static_cast<int64_t>(read_file(kSessions / kFull).size()));
}

TEST_CASE("pi: the active path comes first, the branch written first after it") {
  Parsed p = parse_fixture(kFull);
  Drafts d(p);
  // Root → the last line's entry, then the branch Pi left.
  CHECK(d.order.front() == full_id("a0000001"));
  size_t leaf = d.position(full_id("a000001f"));
  for (const char *left : {"a0000008", "a0000009", "a000000a"}) {
    INFO(left);
    CHECK(d.position(full_id(left)) > leaf);
  }
  CHECK(d.position(full_id("a000000b")) < leaf);
  // parentId → parent_id; a root's parent is the SessionStarted event.
  CHECK(str(d[full_id("a0000001")], "parent_id") == std::string(kFullId) + "-start");
  CHECK(str(d[full_id("a0000008")], "parent_id") == full_id("a0000007"));
  CHECK(str(d[full_id("a000000b")], "parent_id") == full_id("a0000007"));
  for (const Draft &e : p.events) CHECK(e.session_id == kFullId);
}

TEST_CASE("pi: messages — prompts with images, answers with thinking, calls and usage") {
  Parsed p = parse_fixture(kFull);
  Drafts d(p);
  element u = d[full_id("a0000003")];
  CHECK(str(u, "type") == "UserPromptSubmitted");
  CHECK(str(u, "actor") == "user");
  CHECK(str(u["payload"]["text"]).starts_with("Fix the failing test"));
  CHECK(str(u["payload"]["content"].at(0)["type"]) == "image");
  CHECK(str(u["payload"]["content"].at(0)["mime_type"]) == "image/png");
  CHECK(str(u["payload"]["content"].at(0)["data"]).starts_with("iVBORw0KGgo"));
  CHECK(num(u["ts"]) == 1736499604500);
  element prov = u["payload"]["provenance"].value();
  CHECK(str(prov, "file") == kFull);
  CHECK(num(prov["line"]) == 4);
  CHECK(str(prov, "record_id") == "a0000003");

  // Anthropic: thinking with its signature, a tool call, usage as ctxdb means it.
  element a = d[full_id("a0000004")]["payload"].value();
  CHECK(str(d[full_id("a0000004")], "type") == "AssistantMessageCreated");
  CHECK(str(a, "provider") == "anthropic");
  CHECK(str(a, "model") == "claude-sonnet-4-5");
  CHECK(str(a, "stop_reason") == "toolUse");
  CHECK(str(a["content"].at(0)["type"]) == "thinking");
  CHECK(str(a["content"].at(0)["signature"]) == "EqQBCkYIBxgCKkA1sig");
  CHECK(str(a["content"].at(0)["provider"]) == "anthropic");
  CHECK(str(a["content"].at(1)["text"]) == "Let me read the cart code.");
  CHECK(str(a["content"].at(2)["type"]) == "tool_call");
  CHECK(str(a["content"].at(2)["id"]) == "toolu_01");
  CHECK(str(a["content"].at(2)["args"]["path"]) == "src/cart.ts");
  CHECK(num(a["usage"]["input_tokens"]) == 1200);
  CHECK(num(a["usage"]["output_tokens"]) == 80);
  CHECK(num(a["usage"]["cache_write_tokens"]) == 1100);
  CHECK(num(a["usage"]["provider_usage"]["totalTokens"]) == 2380);
  CHECK(str(a, "api") == "anthropic-messages");
  // Redacted thinking: the opaque data, back to Anthropic only.
  element r = d[full_id("a0000006")]["payload"]["content"].at(0).value();
  CHECK(r["redacted"].get_bool().value());
  CHECK(str(r, "data") == "RedactedOpaqueData==");
  // A Responses reasoning item, from the item Pi keeps in thinkingSignature.
  element o = d[full_id("a000000f")]["payload"].value();
  CHECK(str(o, "provider") == "openai");
  CHECK(str(o["content"].at(0)["id"]) == "rs_0a1b2c");
  CHECK(str(o["content"].at(0)["encrypted_content"]) == "gAAAAABencrypted==");
  CHECK(str(o["content"].at(0)["summary"].at(0)) == "Looking at discount.ts");
  CHECK(str(o["content"].at(2)["id"]) == "call_5d6e|fc_5d6e");
  // Gemini: the thought's and the call's signatures.
  element g = d[full_id("a0000019")]["payload"].value();
  CHECK(str(g, "provider") == "gemini");
  CHECK(str(g["content"].at(0)["signature"]) == "CiQB0e2Kb-gemini-sig");
  CHECK(str(g["content"].at(1)["signature"]) == "CiQB0e2Kb-call-sig");
  CHECK(str(g["content"].at(1)["provider"]) == "gemini");
}

TEST_CASE("pi: tool results, errors, images and details") {
  Drafts d(parse_fixture(kFull));
  element ok = d[full_id("a0000005")];
  CHECK(str(ok, "type") == "ToolCallFinished");
  CHECK(str(ok, "actor") == "tool");
  CHECK(str(ok["payload"]["tool_call_id"]) == "toolu_01");
  CHECK(str(ok["payload"]["name"]) == "read");
  CHECK(str(ok["payload"]["output"]).starts_with("export function total"));
  element failed = d[full_id("a0000007")];
  CHECK(str(failed, "type") == "ToolCallFailed");
  CHECK(failed["payload"]["is_error"].get_bool().value());
  CHECK(str(d[full_id("a0000009")]["payload"]["details"]["diff"]).starts_with("-  return"));
  element shot = d[full_id("a000001a")]["payload"].value();
  CHECK(str(shot, "output") == "Captured the cart page.");
  CHECK(str(shot["content"].at(0)["type"]) == "image");
  CHECK(str(shot["content"].at(0)["mime_type"]) == "image/png");
}

TEST_CASE("pi: an aborted turn's call is cancelled; a left branch's open call too") {
  Parsed p = parse_fixture(kFull);
  Drafts d(p);
  // Pi runs no tool of an aborted turn: its call is closed right after it.
  std::string cancel = full_id("a0000016-x1");
  element c = d[cancel];
  CHECK(str(c, "type") == "ToolCallCancelled");
  CHECK(str(c, "parent_id") == full_id("a0000016"));
  CHECK(str(c["payload"]["tool_call_id"]) == "call_7f80");
  CHECK(str(c["payload"]["name"]) == "bash");
  CHECK(str(c["payload"]["reason"]) == "the turn was aborted");
  CHECK(str(d[full_id("a0000016")]["payload"]["stop_reason"]) == "aborted");
  CHECK(str(d[full_id("a0000016")]["payload"]["error_message"]) == "Request was aborted");
  CHECK(str(d[full_id("a0000017")], "parent_id") == cancel);
  // The branch left at a000000a had toolu_04 open: closed after it, from
  // the line that left it (the branch summary's).
  element left = d[full_id("a000000a-x1")];
  CHECK(str(left["payload"]["tool_call_id"]) == "toolu_04");
  CHECK(str(left, "parent_id") == full_id("a000000a"));
  CHECK(num(left["payload"]["provenance"]["line"]) == 12);
  CHECK(str(left["payload"]["provenance"]["record_id"]) == "a000000a");
  for (const Draft &e : p.events)
    if (e.event_json.find(R"("id":")" + full_id("a000000a-x1")) != std::string::npos)
      CHECK(e.first_line == 12);
}

TEST_CASE("pi: compaction, branch summary, context and custom records") {
  Parsed p = parse_fixture(kFull);
  Drafts d(p);
  element c = d[full_id("a000001b")];
  CHECK(str(c, "type") == "CompactionCompleted");
  CHECK(str(c, "actor") == "pi");
  CHECK(str(c["payload"]["summary"]).starts_with("## Goal"));
  CHECK(str(c["payload"]["first_kept_event_id"]) == full_id("a0000017"));
  CHECK(num(c["payload"]["tokens_before"]) == 48210);
  CHECK(str(c["payload"]["summarizer"]["kind"]) == "foreign");
  CHECK(str(c["payload"]["summarizer"]["agent"]) == "pi");
  CHECK(str(c["payload"]["range"]["from_event_id"]) == full_id("a0000001"));
  CHECK(str(c["payload"]["range"]["to_event_id"]) == full_id("a0000016"));
  CHECK(str(c["payload"]["details"]["modifiedFiles"].at(0)) == "src/discount.ts");

  element b = d[full_id("a000000b")];
  CHECK(str(b, "type") == "BranchSummarized");
  CHECK(str(b["payload"]["text"]).starts_with("The following is a summary of a branch"));
  CHECK(str(b["payload"]["text"]).find("preferred discount.ts.</summary>") != std::string::npos);
  CHECK(str(b["payload"]["summary"]["text"]).starts_with("Tried applying"));
  CHECK(str(b["payload"]["from_leaf_event_id"]) == full_id("a000000a"));
  CHECK(str(b["payload"]["common_ancestor_event_id"]) == full_id("a0000007"));

  element cm = d[full_id("a0000013")];
  CHECK(str(cm, "type") == "ContextAdded");
  CHECK(str(cm, "actor") == "system");
  CHECK(str(cm["payload"]["kind"]) == "context");
  CHECK(str(cm["payload"]["source"]) == "extension:reminder");
  CHECK(str(cm["payload"]["text"]) == "Remember to run the linter before finishing.");
  CHECK(str(cm["payload"]["details"]["source"]) == "lint-ext");
  element bash = d[full_id("a0000014")];
  CHECK(str(bash["payload"]["source"]) == "bash_execution");
  CHECK(str(bash["payload"]["text"]) == "Ran `npm run lint`\n```\nsrc/discount.ts: ok\n```");

  for (auto [entry, type] : {std::pair{"a0000001", "pi.model_change"},
                             {"a0000002", "pi.thinking_level_change"},
                             {"a000000c", "pi.label"},
                             {"a0000012", "pi.custom"},
                             {"a000001e", "pi.session_info"},
                             {"a000001f", "pi.workspace_snapshot"}}) {
    INFO(entry);
    element e = d[full_id(entry)];
    CHECK(str(e, "type") == type);
    CHECK(str(e, "actor") == "pi");
    CHECK(str(e["payload"]["record"]["id"]) == entry);
  }
  CHECK(str(d[full_id("a000000d")]["payload"]["record"]["modelId"]) == "gpt-5");
  // Only the type the reader does not know is counted.
  CHECK(p.unknown == std::map<std::string, int64_t>{{"workspace_snapshot", 1}});
}

TEST_CASE("pi: a compaction that keeps nothing is its own first kept event") {
  Parsed p = parse_fixture(kKeepsNothing);
  Drafts d(p);
  std::string sid = "pi-7a3e9b12-0c44-4d8a-b5e1-6f2a9c0d3e02";
  element none = d[sid + "-b0000003"]["payload"].value();
  CHECK(str(none, "first_kept_event_id") == sid + "-b0000003");
  CHECK(str(none["summarizer"]["agent"]) == "pi");
  CHECK(none["summarizer"]["from_hook"].get_bool().value());
  CHECK(num(none["range"]["events"]) == 2);
  element second = d[sid + "-b0000008"]["payload"].value();
  CHECK(str(second, "first_kept_event_id") == sid + "-b0000006");
  CHECK(str(second, "previous_compaction_id") == sid + "-b0000003");
  CHECK(str(second["range"]["from_event_id"]) == sid + "-b0000004");
  CHECK(str(second["range"]["to_event_id"]) == sid + "-b0000005");
}

TEST_CASE("pi: v1 entries get ids from their lines; firstKeptEntryIndex names the kept one") {
  Parsed p = parse_fixture(kV1);
  Drafts d(p);
  std::string sid = "pi-0b1d2c3e-4f50-4617-8a9b-0c1d2e3f4a03";
  REQUIRE(p.events.size() == 8);
  CHECK(d.order.front() == sid + "-L2");
  CHECK(str(d[sid + "-L2"], "parent_id") == sid + "-start");
  for (int line = 3; line <= 9; ++line)
    CHECK(str(d[sid + "-L" + std::to_string(line)], "parent_id") ==
          sid + "-L" + std::to_string(line - 1));
  element c = d[sid + "-L8"]["payload"].value();
  CHECK(str(c, "first_kept_event_id") == sid + "-L7");
  CHECK(str(c, "summary") == "Listed two files, a.txt and b.txt.");
  CHECK(str(d[sid + "-L5"], "type") == "ToolCallFinished");
  CHECK(str(d[sid + "-L3"]["payload"]["provenance"]["record_id"]) == "L3");
  simdjson::dom::parser parser;
  CHECK(num(parser.parse(p.sessions[0].create_json).value()["payload"]["source_version"]) == 1);
}

TEST_CASE("pi: v2's hookMessage is an extension's context") {
  Parsed p = parse_fixture(kV2);
  Drafts d(p);
  std::string sid = "pi-1c2d3e4f-5061-4728-9bac-1d2e3f4a5b04";
  element h = d[sid + "-c0000002"];
  CHECK(str(h, "type") == "ContextAdded");
  CHECK(str(h["payload"]["source"]) == "extension:git-status");
  CHECK(str(h["payload"]["text"]) == "Uncommitted changes: src/main.ts");
  CHECK(str(h["payload"]["content"].at(0)["mime_type"]) == "image/png");
  CHECK(str(h["payload"]["details"]["branch"]) == "main");
  CHECK(p.unknown.empty());
}

TEST_CASE("pi: a malformed line is an error naming file and line") {
  std::string msg = message_of([] { parse_fixture(kMalformed); });
  CHECK(msg.rfind(std::string(kMalformed) + ":4: ", 0) == 0);
  CHECK(code_of([] { parse_fixture(kMalformed); }) == Code::kInvalidJson);
  // A file that does not start with a header is not a Pi session.
  std::string no_header =
      R"({"type":"message","id":"x","parentId":null,"message":{"role":"user","content":"hi"}})"
      "\n";
  CHECK(code_of([&] { parse_bytes(no_header, "f.jsonl"); }) == Code::kInvalidArg);
  CHECK(message_of([&] { parse_bytes(no_header, "f.jsonl"); }).rfind("f.jsonl:1: ", 0) == 0);
  // An entry without its id, in a file of ids.
  std::string no_id =
      R"({"type":"session","version":3,"id":"s1","cwd":"/"})"
      "\n"
      R"({"type":"message","parentId":null,"message":{"role":"user","content":"hi"}})"
      "\n";
  CHECK(message_of([&] { parse_bytes(no_id, "f.jsonl"); }) == "f.jsonl:2: id is missing");
  // Two entries with one id.
  std::string twice = R"({"type":"session","version":3,"id":"s1","cwd":"/"})"
                      "\n"
                      R"({"type":"label","id":"x","parentId":null,"targetId":"x"})"
                      "\n"
                      R"({"type":"label","id":"x","parentId":null,"targetId":"x"})"
                      "\n";
  CHECK(message_of([&] { parse_bytes(twice, "f.jsonl"); }) ==
        "f.jsonl:3: entry id 'x' is already the id of line 2");
}

TEST_CASE("pi: a torn last line is not consumed, and the call before it stays pending") {
  std::string bytes = read_file(kSessions / kTorn);
  Parsed p = parse_bytes(bytes, kTorn);
  CHECK(p.lines_consumed == 3);
  CHECK(p.bytes_consumed == static_cast<int64_t>(bytes.rfind('\n') + 1));
  CHECK(p.events.size() == 2);
  for (const Draft &e : p.events)
    CHECK(e.event_json.find("ToolCallCancelled") == std::string::npos);
}

TEST_CASE("pi: a file read as it grows gives the same drafts, line after line") {
  std::string bytes = read_file(kSessions / kFull);
  Parsed full = parse_bytes(bytes, kFull);
  std::map<std::string, std::string> all;
  for (const Draft &d : full.events) all[d.event_json] = d.session_id;
  for (size_t cut = bytes.find('\n'); cut != std::string::npos; cut = bytes.find('\n', cut + 1)) {
    Parsed part = parse_bytes(bytes.substr(0, cut + 1), kFull);
    // The session's model is known from the first model change on (Pi
    // writes the file once it has an answer, so a reader sees it at once).
    if (cut > bytes.find('\n')) CHECK(part.sessions[0].create_json == full.sessions[0].create_json);
    for (const Draft &d : part.events) {
      INFO("cut at byte " << cut << ": " << d.event_json);
      CHECK(all.count(d.event_json) == 1);
    }
  }
}

TEST_CASE("pi: imported, the database verifies and resumes where Pi does") {
  test::TempDir dir;
  Engine db(dir.file("pi.ctxdb"), "");
  Parsed p = parse_fixture(kFull);
  load(db, p);
  check_consistent(db);
  // main is the active path: its leaf is the last line's entry.
  simdjson::dom::parser parser;
  element branches = parser.parse(db.branch_list(kFullId)).value();
  std::string main_leaf;
  for (element b : branches.get_array())
    if (str(b, "name") == "main" || str(b, "id") == "main") main_leaf = str(b, "leaf_event_id");
  CHECK(main_leaf == full_id("a000001f"));
  // The compaction in force is Pi's, keeping from a0000017.
  simdjson::dom::parser cp;
  element list = cp.parse(db.compactions(kFullId, std::nullopt)).value();
  REQUIRE(list.get_array().size() == 1);
  CHECK(str(list.at(0), "event_id") == full_id("a000001b"));
  CHECK(str(list.at(0), "first_kept_event_id") == full_id("a0000017"));
  // Nothing pending: the aborted call is cancelled.
  std::string calls = db.tool_calls(kFullId, std::nullopt);
  CHECK(calls.find(R"("status":"pending")") == std::string::npos);
  std::string bundle = compile_everywhere(db, kFullId);
  CHECK(sent_events(bundle) == std::vector<std::string>{full_id("a000001b"), full_id("a0000017"),
                                                        full_id("a0000019"), full_id("a000001a"),
                                                        full_id("a000001c"), full_id("a000001d")});
  // Appended again, nothing changes: the ids are the source's.
  std::string before = test::export_all(db);
  load(db, p);
  CHECK(test::export_all(db) == before);
}

TEST_CASE("pi: the other fixtures import, verify and compile as Pi resumes them") {
  test::TempDir dir;
  Engine db(dir.file("pi.ctxdb"), "");
  for (const char *name : {kKeepsNothing, kV1, kV2}) load(db, parse_fixture(name));
  check_consistent(db);
  std::string nothing = "pi-7a3e9b12-0c44-4d8a-b5e1-6f2a9c0d3e02";
  CHECK(sent_events(compile_everywhere(db, nothing)) ==
        std::vector<std::string>{nothing + "-b0000008", nothing + "-b0000006",
                                 nothing + "-b0000007", nothing + "-b0000009",
                                 nothing + "-b000000a"});
  std::string v1 = "pi-0b1d2c3e-4f50-4617-8a9b-0c1d2e3f4a03";
  CHECK(sent_events(compile_everywhere(db, v1)) ==
        std::vector<std::string>{v1 + "-L8", v1 + "-L7", v1 + "-L9"});
  std::string v2 = "pi-1c2d3e4f-5061-4728-9bac-1d2e3f4a5b04";
  // The extension's message is context at its place, not the user's words.
  std::string v2_bundle = compile_everywhere(db, v2);
  CHECK(v2_bundle.find("Uncommitted changes: src/main.ts") != std::string::npos);
  std::string state = db.state(v2, std::nullopt, std::nullopt);
  INFO(state);
  CHECK(state.find(R"("user_goal":{"text":"Check the build.")") != std::string::npos);
  CHECK(state.find(R"("request":{"text":"Check the build.")") != std::string::npos);
}

// A long session as Pi writes it: turns of a prompt, a call, its result
// and an answer, compacted every 125 turns keeping the turn before.
std::string long_session(int turns) {
  std::string out =
      R"({"type":"session","version":3,"id":"long-1","timestamp":"2025-02-01T00:00:00.000Z","cwd":"/home/dev/big"})"
      "\n";
  std::string parent = "null";
  int n = 0;
  auto add = [&](const std::string &body) {
    std::string id = "e" + std::to_string(++n);
    out += R"({"type":)" + body.substr(0, body.find(',')) + R"(,"id":")" + id + R"(","parentId":)" +
           parent + R"(,"timestamp":"2025-02-01T00:00:00.000Z",)" +
           body.substr(body.find(',') + 1) + "}\n";
    parent = "\"" + id + "\"";
    return id;
  };
  std::string previous_user;
  for (int t = 1; t <= turns; ++t) {
    std::string call = "toolu_" + std::to_string(t);
    std::string user = add(R"("message","message":{"role":"user","content":"Step )" +
                           std::to_string(t) + R"(: run the next check.","timestamp":1})");
    add(R"("message","message":{"role":"assistant","content":[{"type":"toolCall","id":")" + call +
        R"(","name":"bash","arguments":{"command":"make check-)" + std::to_string(t) +
        R"("}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":100,"output":20,"cacheRead":900,"cacheWrite":0,"totalTokens":1020,"cost":{"total":0.001}},"stopReason":"toolUse","timestamp":1})");
    add(R"("message","message":{"role":"toolResult","toolCallId":")" + call +
        R"(","toolName":"bash","content":[{"type":"text","text":"check )" + std::to_string(t) +
        R"( passed\nall good"}],"isError":false,"timestamp":1})");
    add(R"("message","message":{"role":"assistant","content":[{"type":"text","text":"Check )" +
        std::to_string(t) +
        R"( passed."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":5,"cacheRead":1000,"cacheWrite":0,"totalTokens":1015,"cost":{"total":0.001}},"stopReason":"stop","timestamp":1})");
    if (t % 125 == 0)
      add(R"("compaction","summary":"Checks 1 to )" + std::to_string(t) +
          R"( passed.","firstKeptEntryId":")" + previous_user + R"(","tokensBefore":50000)");
    previous_user = user;
  }
  return out;
}

TEST_CASE("pi: a long session imports, verifies and compiles within a small budget") {
  std::string bytes = long_session(520);
  Parsed p = parse_bytes(bytes, "long.jsonl");
  CHECK(p.events.size() == 520 * 4 + 4);
  CHECK(p.lines_consumed == 520 * 4 + 4 + 1);
  test::TempDir dir;
  Engine db(dir.file("pi.ctxdb"), "");
  load(db, p);
  check_consistent(db);
  simdjson::dom::parser cp;
  CHECK(cp.parse(db.compactions("pi-long-1", std::nullopt)).value().get_array().size() == 4);
  // Pi's last compaction keeps turns 499 on: what is sent is small.
  std::string bundle = compile_everywhere(db, "pi-long-1", 8000);
  CHECK(sent_events(bundle).front() == "pi-long-1-e2004");
  CHECK(sent_events(bundle)[1] == "pi-long-1-e1996");
  // And ctxdb compacts it further, below its own budget.
  CHECK(test::field(db.compact("pi-long-1", R"({"keep_recent_tokens":300})", nullptr), "status") ==
        "compacted");
  test::Bundle after(db.compile(compile_request("pi-long-1", 2000, "canonical")));
  test::check_bundle(after);
  CHECK(after.used() <= 2000);
}

TEST_CASE("pi: call ids a server reuses or leaves empty still pair; a call the turn left is "
          "cancelled before the next prompt") {
  // Some OpenAI-compatible servers number calls per answer ("call_0").
  std::string bytes = R"({"type":"session","version":3,"id":"ids","cwd":"/"})"
                      "\n";
  std::string parent = "null";
  int n = 0;
  auto add = [&](const std::string &message) {
    std::string id = "f" + std::to_string(++n);
    bytes += R"({"type":"message","id":")" + id + R"(","parentId":)" + parent +
             R"(,"timestamp":"2025-03-01T00:00:00.000Z","message":)" + message + "}\n";
    parent = "\"" + id + "\"";
  };
  auto answer = [](const std::string &id) {
    return R"({"role":"assistant","content":[{"type":"toolCall","id":")" + id +
           R"(","name":"ls","arguments":{}}],"api":"openai-completions","provider":"local","model":"m","usage":{},"stopReason":"toolUse"})";
  };
  auto result = [](const std::string &id) {
    return R"({"role":"toolResult","toolCallId":")" + id +
           R"(","toolName":"ls","content":[{"type":"text","text":"a"}],"isError":false})";
  };
  add(R"({"role":"user","content":"list twice"})");
  add(answer("call_0"));
  add(result("call_0"));
  add(answer("call_0"));
  add(result("call_0"));
  add(answer(""));
  add(result(""));
  // openai-completions keeps the name of the reasoning field in thinkingSignature.
  add(R"({"role":"assistant","content":[{"type":"thinking","thinking":"All listed.","thinkingSignature":"reasoning_content"},{"type":"text","text":"done"}],"api":"openai-completions","provider":"local","model":"m","stopReason":"stop"})");
  add(answer("call_9")); // f9: its result never written (Pi stopped)
  add(R"({"role":"user","content":"go on"})");
  add(R"({"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"openai-completions","provider":"local","model":"m","stopReason":"stop"})");
  Parsed p = parse_bytes(bytes, "ids.jsonl");
  Drafts d(p);
  CHECK(str(d["pi-ids-f2"]["payload"]["content"].at(0)["id"]) == "call_0");
  CHECK(str(d["pi-ids-f3"]["payload"]["tool_call_id"]) == "call_0");
  CHECK(str(d["pi-ids-f4"]["payload"]["content"].at(0)["id"]) == "call_0-f4");
  CHECK(str(d["pi-ids-f5"]["payload"]["tool_call_id"]) == "call_0-f4");
  CHECK(str(d["pi-ids-f6"]["payload"]["content"].at(0)["id"]) == "call-f6");
  CHECK(str(d["pi-ids-f7"]["payload"]["tool_call_id"]) == "call-f6");
  element thought = d["pi-ids-f8"]["payload"]["content"].at(0).value();
  CHECK(str(thought, "text") == "All listed.");
  CHECK(thought["signature"].error() == simdjson::NO_SUCH_FIELD);
  element c = d["pi-ids-f10-c1"];
  CHECK(str(c, "type") == "ToolCallCancelled");
  CHECK(str(c["payload"]["tool_call_id"]) == "call_9");
  CHECK(str(c["payload"]["reason"]) == "the conversation moved on without a result");
  CHECK(str(c, "parent_id") == "pi-ids-f9");
  CHECK(num(c["payload"]["provenance"]["line"]) == 11);
  CHECK(str(d["pi-ids-f10"], "parent_id") == "pi-ids-f10-c1");
  CHECK(d.position("pi-ids-f10-c1") + 1 == d.position("pi-ids-f10"));
  test::TempDir dir;
  Engine db(dir.file("pi.ctxdb"), "");
  load(db, p);
  check_consistent(db);
  compile_everywhere(db, "pi-ids");
}

TEST_CASE("pi: the fixture folder through the importer: each session on its own, the bad one "
          "named") {
  test::TempDir dir;
  Engine db(dir.file("pi.ctxdb"), "");
  std::string options = R"({"format":"pi","path":")" + kSessions.string() + "\"}";
  for (int pass = 1; pass <= 2; ++pass) {
    INFO("pass " << pass);
    simdjson::dom::parser parser;
    element r = parser.parse(db.transcript_import(options)).value();
    CHECK(num(r["imported"]) == (pass == 1 ? 5 : 0));
    CHECK(num(r["unchanged"]) == (pass == 1 ? 0 : 5));
    CHECK(num(r["failed"]) == 1);
    for (element s : r["sessions"].get_array()) {
      std::string file = str(s, "file");
      INFO(file);
      CHECK(s["active_branch_id"].error() == simdjson::NO_SUCH_FIELD); // main is Pi's leaf
      if (file.find("--home-dev-broken--") != std::string::npos) {
        CHECK(str(s, "status") == "failed");
        CHECK(str(s, "error").find(".jsonl:4: ") != std::string::npos);
      } else if (file.find("5f0c2a9e") != std::string::npos && pass == 1) {
        CHECK(num(s["unknown"]["workspace_snapshot"]) == 1);
        CHECK(num(s["lines"]) == 32);
      } else if (file.find("3e4f5061") != std::string::npos && pass == 1) {
        CHECK(num(s["lines"]) == 3); // the torn line waits
      }
    }
  }
  check_consistent(db);
  CHECK(sent_events(compile_everywhere(db, kFullId)) ==
        std::vector<std::string>{full_id("a000001b"), full_id("a0000017"), full_id("a0000019"),
                                 full_id("a000001a"), full_id("a000001c"), full_id("a000001d")});
}

TEST_CASE("pi: an entry whose parent is unknown is a root; a second header is kept last") {
  std::string bytes =
      R"({"type":"session","version":3,"id":"two","cwd":"/"}
{"type":"message","id":"g1","parentId":null,"message":{"role":"user","content":"first"}}
{"type":"message","id":"g2","parentId":"g1","message":{"role":"assistant","content":[{"type":"text","text":"one"}],"api":"anthropic-messages","provider":"anthropic","model":"m","stopReason":"stop"}}
{"type":"session","version":3,"id":"two","cwd":"/"}
{"type":"message","id":"g3","parentId":"gone","message":{"role":"user","content":"again"}}
{"type":"message","id":"g4","parentId":"g3","message":{"role":"assistant","content":[{"type":"text","text":"two"}],"api":"anthropic-messages","provider":"anthropic","model":"m","stopReason":"stop"}}
)";
  Parsed p = parse_bytes(bytes, "two.jsonl");
  Drafts d(p);
  CHECK(d.order ==
        std::vector<std::string>{"pi-two-g3", "pi-two-g4", "pi-two-g1", "pi-two-g2", "pi-two-L4"});
  CHECK(str(d["pi-two-g3"], "parent_id") == "pi-two-start");
  CHECK(str(d["pi-two-L4"], "type") == "pi.session");
  CHECK(p.unknown.empty());
  test::TempDir dir;
  Engine db(dir.file("pi.ctxdb"), "");
  load(db, p);
  check_consistent(db);
  CHECK(sent_events(compile_everywhere(db, "pi-two")) ==
        std::vector<std::string>{"pi-two-g3", "pi-two-g4"});
}

} // namespace transcript_pi_test
