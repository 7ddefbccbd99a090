// The importer of other agents' session files (engine/transcript/importer.hpp):
// its options and errors, the files it finds in an agent's folder, the
// import_sources projection it keeps, and what a pass does to a file that
// grew, changed, tore or broke.
#include "engine.hpp"
#include "test_util.hpp"
#include "transcript/importer.hpp"
#include "util/sha256.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

namespace transcript_import_test {

using namespace ctxdb;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path &p, const std::string &text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string options(const std::string &format, const std::string &path) {
  return R"({"format":")" + format + R"(","path":")" + path + R"("})";
}

// The report's entry for one file.
simdjson::dom::element entry(simdjson::dom::parser &p, const std::string &report, size_t i) {
  return p.parse(report)["sessions"].at(i).value();
}

int64_t event_count(Engine &db) {
  simdjson::dom::parser p;
  return p.parse(db.verify(std::nullopt))["events"].get_int64().value();
}

// The report is what transcript_import_result.schema.json says.
void matches_schema(const std::string &report) {
  INFO(report);
  simdjson::dom::parser p;
  CHECK_NOTHROW(store::embedded_schema("json/transcript_import_result.schema.json")
                    .validate(json::parse(p, report, "report"), ""));
}

// rebuild --check: the projections, import_sources among them, replay to
// what they hold.
void rebuilds_identically(Engine &db) {
  simdjson::dom::parser p;
  std::string report = db.rebuild(R"({"check":true})");
  CHECK(p.parse(report)["identical"].get_bool().value());
}

} // namespace

TEST_CASE("format names") {
  using transcript::Format;
  for (Format f : {Format::kClaudeCode, Format::kCodex, Format::kPi})
    CHECK(transcript::format_named(transcript::format_name(f)) == f);
  CHECK(transcript::format_name(Format::kClaudeCode) == "claude-code");
  CHECK_FALSE(transcript::format_named("claude"));
  CHECK_FALSE(transcript::format_named(""));
}

TEST_CASE("bad options fail with a code and a message naming the fault, changing nothing") {
  test::TempDir dir;
  Engine db(dir.file("db.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  std::string before = test::snapshot(db);
  write_file(dir.file("pi/a.jsonl"), "");
  struct Case {
    std::string options;
    Code code;
    const char *mentions;
  };
  const Case cases[] = {
      {"", Code::kInvalidJson, "transcript import options"},
      {"{", Code::kInvalidJson, "transcript import options"},
      {"[]", Code::kInvalidArg, "transcript import options"},
      {"{\"format\":\"pi\",\"path\":\"\xff\"}", Code::kInvalidUtf8, "transcript import options"},
      {R"({"path":"x"})", Code::kInvalidArg, "format"},
      {R"({"format":"pi"})", Code::kInvalidArg, "path"},
      {R"({"format":"pi","path":""})", Code::kInvalidArg, "path"},
      {R"({"format":"aider","path":"x"})", Code::kInvalidArg, "unknown format 'aider'"},
      {R"({"format":3,"path":"x"})", Code::kInvalidArg, "format"},
      {R"({"format":"pi","path":"x","final":"no"})", Code::kInvalidArg, "final"},
      {R"({"format":"pi","path":"x","follow":true})", Code::kInvalidArg, "follow"},
      {options("pi", dir.file("nowhere")), Code::kNotFound, "nowhere"},
  };
  for (const Case &c : cases) {
    INFO(c.options);
    CHECK(test::code_of([&] { db.transcript_import(c.options); }) == c.code);
    CHECK(test::message_of([&] { db.transcript_import(c.options); }).find(c.mentions) !=
          std::string::npos);
  }
  CHECK(test::snapshot(db) == before);
}

TEST_CASE("a read-only handle is refused before anything is read") {
  test::TempDir dir;
  { Engine db(dir.file("db.ctxdb"), ""); }
  Engine ro(dir.file("db.ctxdb"), R"({"read_only":true})");
  write_file(dir.file("a.jsonl"), "");
  CHECK(test::code_of([&] { ro.transcript_import(options("pi", dir.file("a.jsonl"))); }) ==
        Code::kReadOnly);
}

TEST_CASE("the session files of each agent's folder, in path order") {
  test::TempDir dir;
  fs::path claude = dir.file(".claude");
  write_file(claude / "history.jsonl", "{}\n"); // prompts, not a session
  write_file(claude / "projects/-home-me-b/s2.jsonl", "");
  write_file(claude / "projects/-home-me-a/s1.jsonl", "");
  write_file(claude / "projects/-home-me-a/s1/subagents/agent-x.jsonl", "");
  write_file(claude / "projects/-home-me-a/s1/subagents/notes.jsonl", "");
  write_file(claude / "projects/-home-me-a/s1/tool-results/out.txt", "");
  using transcript::Format;
  std::string root = fs::canonical(claude).string();
  CHECK(transcript::session_files(Format::kClaudeCode, claude.string()) ==
        std::vector<std::string>{root + "/projects/-home-me-a/s1.jsonl",
                                 root + "/projects/-home-me-a/s1/subagents/agent-x.jsonl",
                                 root + "/projects/-home-me-b/s2.jsonl"});
  // A project folder below projects/ too.
  CHECK(transcript::session_files(Format::kClaudeCode, (claude / "projects/-home-me-b").string())
            .size() == 1);

  fs::path codex = dir.file(".codex");
  write_file(codex / "history.jsonl", "");
  write_file(codex / "sessions/2025/10/02/rollout-2025-10-02T09-00-00-b.jsonl", "");
  write_file(codex / "sessions/2025/09/30/rollout-2025-09-30T12-00-00-a.jsonl", "");
  write_file(codex / "sessions/2025/09/30/other.jsonl", "");
  std::string croot = fs::canonical(codex).string();
  CHECK(
      transcript::session_files(Format::kCodex, codex.string()) ==
      std::vector<std::string>{croot + "/sessions/2025/09/30/rollout-2025-09-30T12-00-00-a.jsonl",
                               croot + "/sessions/2025/10/02/rollout-2025-10-02T09-00-00-b.jsonl"});

  fs::path pi = dir.file(".pi/agent");
  write_file(pi / "settings.json", "{}");
  write_file(pi / "sessions/--home-me-b--/2025-01-02_b.jsonl", "");
  write_file(pi / "sessions/--home-me-a--/2025-01-01_a.jsonl", "");
  std::string proot = fs::canonical(pi).string();
  CHECK(transcript::session_files(Format::kPi, pi.string()) ==
        std::vector<std::string>{proot + "/sessions/--home-me-a--/2025-01-01_a.jsonl",
                                 proot + "/sessions/--home-me-b--/2025-01-02_b.jsonl"});

  // A file is itself, whatever its name; a path that is not there is kNotFound.
  CHECK(transcript::session_files(Format::kCodex, (pi / "settings.json").string()).size() == 1);
  CHECK(test::code_of([&] { transcript::session_files(Format::kPi, dir.file("none")); }) ==
        Code::kNotFound);
}

TEST_CASE("import_sources follows the provenance of the events and rebuilds") {
  test::TempDir dir;
  Engine db(dir.file("db.ctxdb"), "");
  db.session_create(
      R"({"id":"pi-1","payload":{"agent_id":"pi","provenance":{"format":"pi","file":"/f.jsonl","line":1}}})");
  db.append_batch(
      "pi-1",
      R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"a","provenance":{"format":"pi","file":"/f.jsonl","line":2,"last_line":4}}}
{"type":"pi.model_change","actor":"pi","payload":{"record":{},"provenance":{"format":"pi","file":"/f.jsonl","line":3,"end_offset":120,"prefix_sha256":"ab"}}}
{"type":"Note","actor":"host","payload":{"text":"not imported"}}
{"type":"Note","actor":"host","payload":{"provenance":{"file":"/g.txt","format":"notes"}}})");
  std::string row = "SELECT last_line*1000000+end_offset FROM import_sources WHERE file='/f.jsonl'";
  CHECK(test::raw_int(dir.file("db.ctxdb"), row) == 4000120);
  CHECK(test::raw_int(dir.file("db.ctxdb"), "SELECT count(*) FROM import_sources") == 1);
  rebuilds_identically(db);
  db.rebuild("");
  CHECK(test::raw_int(dir.file("db.ctxdb"), row) == 4000120);
}

TEST_CASE("a file no longer beginning with the bytes imported is reported changed, not merged") {
  test::TempDir dir;
  Engine db(dir.file("db.ctxdb"), "");
  std::string file = fs::weakly_canonical(dir.file("s.jsonl")).string();
  std::string first = "{\"type\":\"session\",\"id\":\"1\"}\n";
  write_file(file, first + "{\"grown\":true}\n");
  // What an earlier pass would have recorded of its first line.
  std::string hash = util::to_hex(util::sha256(first));
  db.session_create(
      R"({"id":"pi-1","payload":{"agent_id":"pi","provenance":{"format":"pi","file":")" + file +
      R"(","line":1,"end_offset":)" + std::to_string(first.size()) + R"(,"prefix_sha256":")" +
      hash + R"("}}})");
  std::string before = test::snapshot(db);

  write_file(file, "{\"type\":\"session\",\"id\":\"2\"}\n{\"grown\":true}\n");
  simdjson::dom::parser p;
  std::string report = db.transcript_import(options("pi", file));
  matches_schema(report);
  simdjson::dom::element e = entry(p, report, 0);
  CHECK(e["status"].get_string().value() == "changed");
  CHECK(e["session_id"].get_string().value() == "pi-1");
  CHECK(std::string(e["error"].get_string().value()).find(file) != std::string::npos);
  CHECK(p.parse(report)["changed"].get_int64().value() == 1);
  CHECK(test::snapshot(db) == before);

  write_file(file, "{}\n"); // shorter than what was imported
  CHECK(entry(p, db.transcript_import(options("pi", file)), 0)["status"].get_string().value() ==
        "changed");

  write_file(file, first); // exactly what was imported: nothing to read
  report = db.transcript_import(options("pi", file));
  CHECK(entry(p, report, 0)["status"].get_string().value() == "unchanged");
  CHECK(entry(p, report, 0)["events"].get_int64().value() == 0);
  CHECK(test::snapshot(db) == before);
  CHECK(event_count(db) == 1);
}

namespace {

// Claude Code records as its session files hold them (a prompt, and the
// answer to it: one API message), through the real reader.
std::string cc_user(const std::string &uuid, const std::string &parent, const std::string &text) {
  return R"({"type":"user","uuid":")" + uuid + R"(","parentUuid":)" +
         (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"sessionId":"S1","cwd":"/w","timestamp":"2025-06-01T10:00:00.000Z","message":{"role":"user","content":")" +
         text + "\"}}\n";
}

std::string cc_answer(const std::string &uuid, const std::string &parent, const std::string &text) {
  return R"({"type":"assistant","uuid":")" + uuid + R"(","parentUuid":")" + parent +
         R"(","sessionId":"S1","cwd":"/w","timestamp":"2025-06-01T10:00:01.000Z","message":{"id":"msg_)" +
         uuid +
         R"(","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":")" +
         text + R"("}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":2}}})" +
         "\n";
}

std::string turn(int n) {
  std::string u = "u" + std::to_string(n), a = "a" + std::to_string(n);
  std::string parent = n == 1 ? "" : "a" + std::to_string(n - 1);
  return cc_user(u, parent, "question " + std::to_string(n)) +
         cc_answer(a, u, "answer " + std::to_string(n));
}

struct Imported {
  std::string report;
  simdjson::dom::parser parser;
  simdjson::dom::element file(size_t i) { return entry(parser, report, i); }
  std::string status(size_t i) { return std::string(file(i)["status"].get_string().value()); }
  int64_t events(size_t i) { return file(i)["events"].get_int64().value(); }
};

Imported import(Engine &db, const std::string &format, const std::string &path, bool final = true) {
  std::string o = options(format, path);
  if (!final) o = o.substr(0, o.size() - 1) + R"(,"final":false})";
  return Imported{db.transcript_import(o), {}};
}

void verifies(Engine &db) {
  simdjson::dom::parser p;
  CHECK(p.parse(db.verify(std::nullopt))["ok"].get_bool().value());
  rebuilds_identically(db);
}

} // namespace

TEST_CASE("the same file twice changes nothing; a grown file appends only its new lines") {
  test::TempDir dir;
  Engine db(dir.file("db.ctxdb"), "");
  std::string file = dir.file("projects/-w/S1.jsonl");
  write_file(file, turn(1) + turn(2));
  Imported first = import(db, "claude-code", dir.file(".").c_str());
  CHECK(first.status(0) == "imported");
  CHECK(first.file(0)["session_id"].get_string().value() == "cc-S1");
  CHECK(first.file(0)["lines"].get_int64().value() == 4);
  int64_t events = event_count(db);
  CHECK(first.events(0) == events); // SessionStarted and each record's event
  verifies(db);

  std::string before = test::snapshot(db);
  Imported again = import(db, "claude-code", file);
  CHECK(again.status(0) == "unchanged");
  CHECK(again.events(0) == 0);
  CHECK(test::snapshot(db) == before);

  std::ofstream(file, std::ios::app) << turn(3);
  Imported grown = import(db, "claude-code", file);
  CHECK(grown.status(0) == "imported");
  CHECK(grown.file(0)["lines"].get_int64().value() == 2);
  CHECK(grown.events(0) == 2);
  CHECK(event_count(db) == events + 2);
  verifies(db);
  // The last event of each pass records the bytes read and their hash.
  CHECK(test::raw_int(dir.file("db.ctxdb"), "SELECT end_offset FROM import_sources") ==
        int64_t(fs::file_size(file)));
  CHECK(test::raw_int(dir.file("db.ctxdb"), "SELECT last_line FROM import_sources") == 6);
}

TEST_CASE("a line changed in the middle is reported, and nothing of the file merged") {
  test::TempDir dir;
  Engine db(dir.file("db.ctxdb"), "");
  std::string file = dir.file("S1.jsonl");
  write_file(file, turn(1) + turn(2));
  CHECK(import(db, "claude-code", file).status(0) == "imported");
  std::string before = test::snapshot(db);
  write_file(file, turn(1) + cc_user("u2", "a1", "question 2, edited") +
                       cc_answer("a2", "u2", "answer 2") + turn(3));
  Imported changed = import(db, "claude-code", file);
  CHECK(changed.status(0) == "changed");
  CHECK(changed.events(0) == 0);
  CHECK(std::string(changed.file(0)["error"].get_string().value()).find("S1.jsonl") !=
        std::string::npos);
  CHECK(test::snapshot(db) == before);
}

TEST_CASE("a handle reads again only the files whose size or modification time changed") {
  test::TempDir dir;
  std::string file = dir.file("S1.jsonl");
  write_file(file, turn(1));
  {
    Engine db(dir.file("db.ctxdb"), "");
    CHECK(import(db, "claude-code", file).status(0) == "imported");
    CHECK(import(db, "claude-code", file).status(0) == "unchanged");
    // The same size and modification time: this handle does not read it again.
    fs::file_time_type mtime = fs::last_write_time(file);
    std::string edited = turn(1);
    edited.replace(edited.find("question 1"), 10, "question X");
    write_file(file, edited);
    fs::last_write_time(file, mtime);
    CHECK(import(db, "claude-code", file).status(0) == "unchanged");
  }
  // Another handle reads it, and sees the change.
  Engine db(dir.file("db.ctxdb"), "");
  CHECK(import(db, "claude-code", file).status(0) == "changed");
}

TEST_CASE("a torn last line waits for the next pass") {
  test::TempDir dir;
  Engine db(dir.file("db.ctxdb"), "");
  std::string file = dir.file("S1.jsonl");
  std::string next = turn(2);
  write_file(file, turn(1) + next.substr(0, 40)); // a writer mid-line
  Imported torn = import(db, "claude-code", file, false);
  CHECK(torn.status(0) == "imported");
  CHECK(torn.file(0)["lines"].get_int64().value() == 2);
  int64_t events = event_count(db);
  CHECK(import(db, "claude-code", file, false).status(0) == "unchanged");
  CHECK(event_count(db) == events);

  write_file(file, turn(1) + next); // the line completed
  Imported completed = import(db, "claude-code", file);
  CHECK(completed.status(0) == "imported");
  CHECK(completed.file(0)["lines"].get_int64().value() == 2);
  CHECK(event_count(db) == events + 2);
  verifies(db);
}

TEST_CASE("a malformed line fails its session, rolled back and named; the others import") {
  test::TempDir dir;
  Engine db(dir.file("db.ctxdb"), "");
  write_file(dir.file("projects/-w/A.jsonl"), turn(1));
  write_file(dir.file("projects/-w/B.jsonl"), turn(1) + "{\"type\":\"user\",\n" + turn(2));
  write_file(dir.file("projects/-w/C.jsonl"),
             turn(1) + R"({"type":"brand-new-record","uuid":"x1","sessionId":"S1"})"
                       "\n");
  Imported r = import(db, "claude-code", dir.file("projects"));
  matches_schema(r.report);
  simdjson::dom::element top = r.parser.parse(r.report);
  CHECK(top["imported"].get_int64().value() == 2);
  CHECK(top["failed"].get_int64().value() == 1);
  CHECK(r.status(0) == "imported");
  CHECK(r.status(1) == "failed");
  std::string error(r.file(1)["error"].get_string().value());
  CHECK(error.find("B.jsonl:3") != std::string::npos);
  CHECK(r.events(1) == 0);
  CHECK_FALSE(db.session_exists("cc-B"));
  CHECK(r.status(2) == "imported");
  CHECK(r.file(2)["unknown"]["brand-new-record"].get_int64().value() == 1);
  verifies(db);

  // Fixed, it imports on the next pass.
  write_file(dir.file("projects/-w/B.jsonl"), turn(1) + turn(2));
  Imported fixed = import(db, "claude-code", dir.file("projects"));
  CHECK(fixed.status(0) == "unchanged");
  CHECK(fixed.status(1) == "imported");
  CHECK(db.session_exists("cc-B"));
  verifies(db);
}

namespace {

const fs::path kPiFixtures =
    fs::path(__FILE__).parent_path().parent_path() / "fixtures" / "transcripts" / "pi";

std::string read_text(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string pi_message(const std::string &id, const std::string &parent, const std::string &role,
                       const std::string &text) {
  std::string content =
      role == "user" ? "\"" + text + "\"" : R"([{"type":"text","text":")" + text + R"("}])";
  return R"({"type":"message","id":")" + id + R"(","parentId":)" +
         (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"timestamp":"2025-01-10T10:00:01.000Z","message":{"role":")" + role +
         R"(","content":)" + content + R"(,"timestamp":1736503201000}})" + "\n";
}

} // namespace

TEST_CASE("a Pi fixture imported in two passes equals it imported whole") {
  test::TempDir dir;
  fs::path source;
  for (const auto &e : fs::recursive_directory_iterator(kPiFixtures))
    if (e.path().filename().string().starts_with("2025-01-10T09")) source = e.path();
  REQUIRE(!source.empty());
  std::string text = read_text(source);
  size_t half = text.find('\n', text.size() / 2) + 1;

  Engine whole(dir.file("whole.ctxdb"), "");
  write_file(dir.file("a/s.jsonl"), text);
  CHECK(import(whole, "pi", dir.file("a/s.jsonl")).status(0) == "imported");

  Engine parts(dir.file("parts.ctxdb"), "");
  write_file(dir.file("b/s.jsonl"), text.substr(0, half));
  Imported first = import(parts, "pi", dir.file("b/s.jsonl"));
  CHECK(first.status(0) == "imported");
  write_file(dir.file("b/s.jsonl"), text);
  Imported second = import(parts, "pi", dir.file("b/s.jsonl"));
  CHECK(second.status(0) == "imported");
  CHECK(first.events(0) + second.events(0) == event_count(whole));
  CHECK(event_count(parts) == event_count(whole));
  // The same events under the same ids, whichever way they came in.
  for (const char *db : {"whole.ctxdb", "parts.ctxdb"})
    CHECK(test::raw_int(dir.file(db), "SELECT count(*) FROM events WHERE id LIKE 'pi-%'") ==
          event_count(whole));
  verifies(parts);
}

TEST_CASE("a later pass whose active leaf left main reports its branch") {
  test::TempDir dir;
  Engine db(dir.file("db.ctxdb"), "");
  std::string file = dir.file("s.jsonl");
  std::string head =
      R"({"type":"session","version":3,"id":"t1","timestamp":"2025-01-10T10:00:00.000Z","cwd":"/w"})"
      "\n" +
      pi_message("m1", "", "user", "first") + pi_message("m2", "m1", "assistant", "one");
  write_file(file, head);
  Imported first = import(db, "pi", file);
  CHECK(first.status(0) == "imported");
  CHECK(first.file(0)["active_branch_id"].error() == simdjson::NO_SUCH_FIELD);
  // The user went back to m1 and asked again: the last line is on a new branch.
  write_file(file, head + pi_message("m3", "m1", "user", "second try"));
  Imported second = import(db, "pi", file);
  CHECK(second.status(0) == "imported");
  std::string_view branch;
  REQUIRE(!second.file(0)["active_branch_id"].get(branch));
  CHECK(branch != "main");
  CHECK(test::field(db.event_get("pi-t1-m3"), "branch_id") == branch);
  verifies(db);
}

} // namespace transcript_import_test
