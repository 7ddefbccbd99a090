// Spill at append (DESIGN §4): a large tool output or file content becomes
// an artifact and the stored event keeps a preview and the ref; base64
// images become binary artifacts. All in the append's transaction.
#include "agent_events.hpp"
#include "artifact/text.hpp"
#include "engine.hpp"
#include "test_util.hpp"
#include "util/sha256.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace spill_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

// "line 1\nline 2\n…" up to `bytes` bytes exactly (the last line may be cut).
std::string text_of(size_t bytes) {
  std::string s;
  for (int i = 1; s.size() < bytes; ++i) s += "line " + std::to_string(i) + "\n";
  s.resize(bytes);
  return s;
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else
      out += c;
  }
  return out + "\"";
}

// A ToolCallFinished of `call_id` with `output`; `more` adds payload fields
// (",\"name\":…"), `extra` envelope fields.
std::string result(const std::string &call_id, const std::string &output,
                   const std::string &more = "", const std::string &extra = "") {
  return event("ToolCallFinished", "tool",
               R"({"tool_call_id":")" + call_id + R"(","output":)" + json_string(output) + more +
                   "}",
               extra);
}

// A small config: spill above 100 bytes, previews of 40.
constexpr char kSmall[] = R"({"spill":{"threshold_bytes":100,"preview_bytes":40}})";

// A database with one session "s" opened with `config`.
struct Db {
  explicit Db(const std::string &config = kSmall) : db(dir.file("s.ctxdb"), config) {
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  }
  std::string add(const std::string &line) { return id_of(db.append("s", line)); }
  std::string payload(const std::string &event_id) {
    return field(db.event_get(event_id), "payload");
  }
  std::string artifacts() { return db.artifact_list(std::string_view("s")); }
  // A call to `name` and its result with `output`: the result's id.
  std::string run_id(const std::string &call_id, const std::string &name,
                     const std::string &output) {
    add(call(call_id, "", name));
    return add(result(call_id, output));
  }
  // … and the result's stored payload.
  std::string run(const std::string &call_id, const std::string &name, const std::string &output) {
    return payload(run_id(call_id, name, output));
  }

  TempDir dir;
  Engine db;
};

// A base64 string and the bytes it encodes (a PNG header, some NULs).
constexpr char kPng64[] = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB";
const std::string kPngBytes("\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01", 24);

} // namespace

TEST_CASE("spill: output up to the threshold stays; one byte more is spilled") {
  Db d;
  std::string at = d.run("c1", "grep", text_of(100));
  CHECK(field(at, "output") == text_of(100));
  CHECK(at.find("artifact_id") == std::string::npos);
  CHECK(d.artifacts() == "[]");

  std::string full = text_of(101);
  std::string event_id = d.run_id("c2", "grep", full);
  std::string p = d.payload(event_id);
  std::string id = field(p, "artifact_id");
  CHECK(id == "art_" + util::to_hex(util::sha256(full)));
  CHECK(field(p, "output_bytes") == "101");
  CHECK(field(p, "output_lines") == std::to_string(artifact::count_lines(full)));
  CHECK(field(field(p, "spill"), "policy") == "head_tail");
  CHECK(d.db.artifact_read(id, 0, -1) == full);
  std::string info = d.db.artifact_info(id);
  CHECK(field(info, "kind") == "tool_output");
  CHECK(field(info, "mime") == "text/plain");
  CHECK(field(info, "name") == "grep");
  std::string ref = items(field(info, "refs"))[0];
  CHECK(field(ref, "event_id") == event_id);
  CHECK(field(ref, "role") == "output");
  CHECK(field(ref, "session_id") == "s");
}

TEST_CASE("spill: tail for shells, head for readers, head and tail otherwise") {
  Db d;
  std::string full = text_of(400); // lines "line 1" … "line 59", the last cut
  std::string first = "line 1\n", last = full.substr(full.rfind('\n') + 1);

  std::string bash = d.run("c1", "Bash", full); // names are matched ignoring case
  std::string out = field(bash, "output");
  std::string id = field(bash, "artifact_id");
  CHECK(field(field(bash, "spill"), "policy") == "tail");
  CHECK(out.ends_with(last));
  CHECK(out.starts_with("… ["));
  CHECK(out.find("omitted; all in " + id + "] …\n") != std::string::npos);
  CHECK(field(d.db.artifact_info(id), "kind") == "command_log");

  std::string read = d.run("c2", "read_file", full + "x"); // other bytes, another artifact
  out = field(read, "output");
  CHECK(field(field(read, "spill"), "policy") == "head");
  CHECK(out.starts_with(first));
  CHECK(out.ends_with("all in " + field(read, "artifact_id") + "] …"));

  std::string other = d.run("c3", "grep", full + "y");
  out = field(other, "output");
  CHECK(field(field(other, "spill"), "policy") == "head_tail");
  CHECK(out.starts_with(first));
  CHECK(out.ends_with("y"));
  CHECK(out.find("omitted; all in ") != std::string::npos);

  // Whole lines only, within the budget (the marker aside), and the
  // counts add up.
  std::string spill = field(bash, "spill");
  std::string kept = out.substr(0, out.find("… ["));
  CHECK(kept.size() <= 20);
  CHECK(kept.ends_with("\n"));
  int64_t omitted = std::stoll(field(spill, "omitted_bytes"));
  std::string marker_end = "] …\n";
  std::string tail = field(bash, "output");
  tail = tail.substr(tail.find(marker_end) + marker_end.size());
  CHECK(int64_t(tail.size()) + omitted == 400);
  CHECK(tail.size() <= 40);
}

TEST_CASE("spill: per-tool policy and threshold from the config") {
  Db d(R"({"spill":{"threshold_bytes":100,"preview_bytes":40,"tools":{)"
       R"("grep":{"policy":"tail","threshold_bytes":50},"bash":{"threshold_bytes":0},)"
       R"("cat":{"preview_bytes":10,"preview_lines":1}}}})");
  std::string grep = d.run("c1", "grep", text_of(51));
  CHECK(field(field(grep, "spill"), "policy") == "tail");
  CHECK(field(d.run("c2", "grep", text_of(50)), "output") == text_of(50));
  // Threshold 0: this tool never spills.
  CHECK(field(d.run("c3", "bash", text_of(5000)), "output") == text_of(5000));
  std::string cat = d.run("c4", "cat", text_of(200));
  CHECK(field(cat, "output").starts_with("line 1\n… ["));
  CHECK(field(field(cat, "spill"), "policy") == "head");
}

TEST_CASE("spill: a result without a name takes its call's, on its own branch") {
  Db d;
  std::string root = d.add(prompt("go"));
  d.add(call("c1", "", "read_file"));
  std::string on_main = d.payload(d.add(result("c1", text_of(300))));
  CHECK(field(field(on_main, "spill"), "policy") == "head");
  CHECK(field(d.db.artifact_info(field(on_main, "artifact_id")), "name") == "read_file");

  // A fork before the call reuses the call id for a shell.
  std::string forked = d.add(call("c1", after(root), "bash"));
  std::string on_fork = d.payload(d.add(result("c1", text_of(301), "", after(forked))));
  CHECK(field(field(on_fork, "spill"), "policy") == "tail");

  // A name in the result wins over the call's.
  d.add(call("c2", "", "bash"));
  std::string named = d.payload(d.add(result("c2", text_of(302), R"(,"name":"grep")")));
  CHECK(field(field(named, "spill"), "policy") == "head_tail");
}

TEST_CASE("spill: a FileRead's content keeps its head; the state's files read name the artifact") {
  Db d;
  std::string full = text_of(500);
  std::string id =
      d.add(event("FileRead", "tool", R"({"path":"src/a.c","content":)" + json_string(full) + "}"));
  std::string p = d.payload(id);
  CHECK(field(p, "path") == "src/a.c");
  CHECK(field(p, "content").starts_with("line 1\n"));
  CHECK(field(p, "content_bytes") == "500");
  CHECK(field(field(p, "spill"), "policy") == "head");
  std::string art = field(p, "artifact_id");
  CHECK(d.db.artifact_read(art, 0, -1) == full);
  std::string info = d.db.artifact_info(art);
  CHECK(field(info, "kind") == "file");
  CHECK(field(info, "name") == "src/a.c");
  CHECK(field(items(field(info, "refs"))[0], "role") == "content");
  // The state's files read point at it.
  CHECK(d.db.state("s", std::nullopt, std::nullopt).find(art) != std::string::npos);
  // A short file stays inline.
  CHECK(field(d.payload(d.add(event("FileRead", "tool", R"({"path":"b","content":"hi"})"))),
              "content") == "hi");
}

TEST_CASE("spill: the stored preview is what messages show and count, with the ref") {
  Db d;
  std::string full = text_of(3000);
  std::string p = d.run("c1", "bash", full);
  std::string tool = items(d.db.messages("s", std::nullopt)).back();
  std::string block = items(field(tool, "blocks"))[0];
  CHECK(field(block, "text") == field(p, "output"));
  CHECK(field(block, "artifact_id") == field(p, "artifact_id"));
  CHECK(std::stoll(field(tool, "tokens")) < 100); // not the 3000 bytes'
  std::string calls = items(d.db.tool_calls("s", std::nullopt))[0];
  CHECK(field(field(calls, "result"), "artifact_id") == field(p, "artifact_id"));
}

TEST_CASE("spill: a payload that names its own artifact, or no spill config, stays") {
  Db d;
  d.add(call("c2"));
  std::string p = d.payload(d.add(result("c2", text_of(500), R"(,"artifact_id":"art_mine")")));
  CHECK(field(p, "output") == text_of(500));
  CHECK(field(p, "artifact_id") == "art_mine");

  for (const char *config : {R"({"spill":{"enabled":false,"threshold_bytes":10}})",
                             R"({"spill":{"threshold_bytes":0}})"}) {
    Db off(config);
    CHECK(field(off.run("c1", "bash", text_of(100000)), "output") == text_of(100000));
    CHECK(off.artifacts() == "[]");
  }
  // Defaults: 16 KiB.
  Db defaults("");
  CHECK(field(defaults.run("c1", "bash", text_of(16384)), "output") == text_of(16384));
  std::string big = defaults.run("c2", "bash", text_of(16385));
  CHECK(field(big, "output_bytes") == "16385");
  CHECK(field(big, "output").size() < 2048 + 120);
}

TEST_CASE("spill: a single long line is cut between UTF-8 characters") {
  Db d;
  std::string line;
  while (line.size() < 300) line += "é€";
  std::string p = d.run("c1", "bash", line);
  std::string out = field(p, "output");
  std::string kept = out.substr(out.find("] …\n") + std::string("] …\n").size());
  CHECK(!kept.empty());
  CHECK(line.ends_with(kept)); // a suffix that starts on a character
  CHECK(std::stoll(field(field(p, "spill"), "omitted_bytes")) + int64_t(kept.size()) ==
        int64_t(line.size()));
}

TEST_CASE("spill: base64 images become binary artifacts, in every message type") {
  Db d;
  std::string user = d.payload(
      d.add(event("UserPromptSubmitted", "user",
                  R"({"text":"look","content":[{"type":"image","data":")" + std::string(kPng64) +
                      R"(","media_type":"image/png","alt":"a dot"}]})")));
  std::string block = items(field(user, "content"))[0];
  CHECK(block == R"({"type":"image","alt":"a dot","artifact_id":"art_)" +
                     util::to_hex(util::sha256(kPngBytes)) +
                     R"(","mime_type":"image/png","bytes":24})");
  std::string art = field(block, "artifact_id");
  CHECK(d.db.artifact_read(art, 0, -1) == kPngBytes);
  std::string info = d.db.artifact_info(art);
  CHECK(field(info, "kind") == "image");
  CHECK(field(info, "mime") == "image/png");
  CHECK(field(items(field(info, "refs"))[0], "role") == "image");

  // Anthropic's source form, beside text and a call.
  std::string assistant = d.payload(d.add(event(
      "AssistantMessageCreated", "assistant",
      R"({"content":[{"type":"text","text":"here"},{"type":"image","source":{"type":"base64",)"
      R"("media_type":"image/jpeg","data":"AAEC"}},{"type":"tool_call","id":"c1","name":"x"}]})")));
  std::vector<std::string> blocks = items(field(assistant, "content"));
  REQUIRE(blocks.size() == 3);
  CHECK(blocks[0] == R"({"type":"text","text":"here"})");
  CHECK(field(blocks[1], "mime_type") == "image/jpeg");
  CHECK(field(blocks[1], "bytes") == "3");
  CHECK(d.db.artifact_read(field(blocks[1], "artifact_id"), 0, -1) == std::string("\0\1\2", 3));
  CHECK(field(blocks[2], "name") == "x");

  // A tool result's blocks; its small output stays.
  std::string tool = d.payload(d.add(
      event("ToolCallFinished", "tool",
            R"({"tool_call_id":"c1","output":"shot","content":[{"type":"image","data":"AAE=",)"
            R"("mime_type":"image/gif"}]})")));
  CHECK(field(tool, "output") == "shot");
  std::string shot = items(field(tool, "content"))[0];
  CHECK(field(shot, "bytes") == "2");
  CHECK(field(shot, "mime_type") == "image/gif");

  // A url image is no base64: it stays as it is.
  std::string url = R"({"type":"image","source":{"type":"url","url":"https://x/y.png"}})";
  std::string a2 = d.payload(
      d.add(event("AssistantMessageCreated", "assistant", R"({"content":[)" + url + "]}")));
  CHECK(items(field(a2, "content"))[0] == url);

  Db off(R"({"spill":{"images":false}})");
  std::string kept = off.payload(off.add(
      event("UserPromptSubmitted", "user",
            R"({"text":"x","content":[{"type":"image","data":"AAE=","mime_type":"image/png"}]})")));
  CHECK(field(items(field(kept, "content"))[0], "data") == "AAE=");
  CHECK(off.artifacts() == "[]");
}

TEST_CASE("spill: an image whose data is not base64 is rejected and nothing is stored") {
  Db d;
  std::string before = snapshot(d.db);
  for (const char *bad : {"AA=B", "AAE", "AA*E", "===="}) {
    std::string line = event("AssistantMessageCreated", "assistant",
                             R"({"content":[{"type":"text","text":"t"},{"type":"image",)"
                             R"("data":")" +
                                 std::string(bad) + R"(","mime_type":"image/png"}]})");
    try {
      d.db.append("s", line);
      FAIL("accepted " << bad);
    } catch (const Error &e) {
      CHECK(e.code() == Code::kInvalidArg);
      CHECK_MESSAGE(std::string(e.what()).find("payload.content[1].data") != std::string::npos,
                    e.what());
    }
  }
  CHECK(code_of([&] {
          d.db.append("s", event("UserPromptSubmitted", "user",
                                 R"({"text":"x","content":[{"type":"image","source":)"
                                 R"({"type":"base64","media_type":"image/png","data":"@@@@"}}]})"));
        }) == Code::kInvalidArg);
  CHECK(snapshot(d.db) == before);
  CHECK(d.db.artifact_list(std::nullopt) == "[]");
}

TEST_CASE("spill: a failed append or batch leaves no artifact behind") {
  Db d;
  d.add(call("c1"));
  std::string before = snapshot(d.db);
  // The spill's put happens, then a later event of the batch is rejected.
  std::string batch = result("c1", text_of(1000)) + "\n" +
                      event("AssistantMessageCreated", "assistant",
                            R"({"content":[{"type":"image","data":"AAE=","mime_type":"x"}]})") +
                      "\n" + result("nope", "orphan") + "\n";
  CHECK(code_of([&] { d.db.append_batch("s", batch); }) == Code::kNotFound);
  // A result rejected by its projection after its own spill.
  CHECK(code_of([&] { d.db.append("s", result("unknown", text_of(1000))); }) == Code::kNotFound);
  CHECK(snapshot(d.db) == before);
  CHECK(d.db.artifact_list(std::nullopt) == "[]");
  Engine again(d.dir.file("s.ctxdb"), kSmall);
  CHECK(again.artifact_list(std::nullopt) == "[]");
}

TEST_CASE("spill: retrying a spilled event returns it; other content is a conflict") {
  Db d;
  d.add(call("c1", "", "bash")); // the result names no tool: resolved through the call
  std::string line = result("c1", text_of(700), "", R"("id":"evt_retry")");
  std::string first = d.db.append("s", line);
  std::string count = d.db.artifact_list(std::nullopt);
  CHECK(d.db.append("s", line) == first);
  CHECK(d.db.append_batch("s", line + "\n").find(R"("count":1)") != std::string::npos);
  CHECK(field(d.db.append_batch("s", line + "\n"), "last_id") == "evt_retry");
  CHECK(d.db.artifact_list(std::nullopt) == count);
  // The stored (spilled) form sent back is the same event too.
  std::string stored =
      event("ToolCallFinished", "tool", field(first, "payload"), R"("id":"evt_retry")");
  CHECK(d.db.append("s", stored) == first);
  CHECK(code_of([&] { d.db.append("s", result("c1", text_of(701), "", R"("id":"evt_retry")")); }) ==
        Code::kConflict);
  // A retry in the same batch as the original.
  d.add(call("c2"));
  std::string twice = result("c2", text_of(900), "", R"("id":"evt_twice")");
  CHECK(field(d.db.append_batch("s", twice + "\n" + twice), "count") == "2");
  CHECK(field(d.db.event_get("evt_twice"), "seq") == field(d.db.append("s", twice), "seq"));
}

TEST_CASE("spill: rebuild is byte-identical, verify passes, export and import round trip") {
  Db d;
  d.add(prompt("go"));
  d.run("c1", "bash", text_of(5000));
  d.add(call("c2", "", "read_file"));
  d.db.append_batch("s", result("c2", text_of(800)) + "\n" +
                             event("FileRead", "tool",
                                   R"({"path":"x","content":)" + json_string(text_of(900)) + "}") +
                             "\n" +
                             event("UserPromptSubmitted", "user",
                                   R"({"text":"see","content":[{"type":"image","data":")" +
                                       std::string(kPng64) + R"(","mime_type":"image/png"}]})") +
                             "\n");
  CHECK(field(d.db.rebuild(R"({"check":true})"), "identical") == "true");
  CHECK(field(d.db.verify(std::nullopt), "ok") == "true");

  std::string log = export_all(d.db);
  // Into a fresh database, with a spill config that would spill again: the
  // stored events come in as they are, hashes intact.
  TempDir other;
  Engine copy(other.file("copy.ctxdb"), R"({"spill":{"threshold_bytes":10,"preview_bytes":5}})");
  std::string events = std::to_string(std::count(log.begin(), log.end(), '\n'));
  CHECK(field(copy.import(log), "imported") == events);
  CHECK(export_all(copy) == log);
  CHECK(field(copy.verify(std::nullopt), "ok") == "true");
  CHECK(copy.messages("s", std::nullopt) == d.db.messages("s", std::nullopt));
  CHECK(copy.artifact_list(std::nullopt) == "[]"); // artifacts are not in an export
  // Into the same database: everything is there already.
  CHECK(field(d.db.import(log), "skipped") == events);
}

TEST_CASE("spill: a bad spill config is refused at open, naming the field") {
  TempDir dir;
  auto open_with = [&](const std::string &config) {
    try {
      Engine db(dir.file("c.ctxdb"), config);
      return std::string("opened");
    } catch (const Error &e) {
      CHECK(e.code() == Code::kInvalidArg);
      return std::string(e.what());
    }
  };
  CHECK(open_with(R"({"spill":{"tools":{"bash":{"policy":"middle"}}}})")
            .find("spill.tools.bash.policy") != std::string::npos);
  CHECK(open_with(R"({"spill":{"treshold_bytes":5}})").find("spill.treshold_bytes") !=
        std::string::npos);
  CHECK(open_with(R"({"spill":{"threshold_bytes":-1}})").find("spill.threshold_bytes") !=
        std::string::npos);
  CHECK(open_with(R"({"spill":{"tools":{"bash":{"limit":1}}}})").find("spill.tools.bash.limit") !=
        std::string::npos);
  CHECK(open_with(R"({"spill":{"tools":{"bash":"tail"}}})").find("spill.tools.bash") !=
        std::string::npos);
  CHECK(open_with(R"({"spill":{"images":"yes"}})").find("spill.images") != std::string::npos);
  CHECK(open_with(R"({"spill":{"preview_lines":0}})").find("spill.preview_lines") !=
        std::string::npos);
  CHECK(open_with(R"({"spill":{"tools":{"bash":{"policy":"tail","threshold_bytes":8192}}}})") ==
        "opened");
}

} // namespace spill_test
