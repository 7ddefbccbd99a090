// Search of sessions: words, substrings, Chinese and Japanese,
// filters, branches, appends after a search, rebuild, and queries that are
// not FTS5 syntax.
#include "agent_events.hpp"
#include "engine.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace search_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

struct Fixture : SessionFixture {
  std::string search(const std::string &q, const std::string &options = "") {
    return db.search(q, options);
  }
  std::vector<std::string> hits(const std::string &q, const std::string &options = "") {
    return items(field(search(q, options), "hits"));
  }
  // The event ids of the hits, in order.
  std::vector<std::string> found(const std::string &q, const std::string &options = "") {
    return column(field(search(q, options), "hits"), "event_id");
  }
};

// A snippet without its marks (« » and the … of a cut).
std::string unmarked(std::string s) {
  for (const char *mark : {"«", "»", "…"})
    for (size_t at; (at = s.find(mark)) != std::string::npos;)
      s.erase(at, std::string(mark).size());
  return s;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string tool_output(const std::string &id, const std::string &output) {
  return event("ToolCallFinished", "tool",
               R"({"tool_call_id":")" + id + R"(","output":")" + output + "\"}");
}

} // namespace

TEST_CASE("search: the words of every kind of message, marked in a snippet") {
  Fixture f;
  std::string p = f.add(prompt("please fix the flaky websocket reconnect"));
  std::string a = f.add(event("AssistantMessageCreated", "assistant",
                              R"({"content":[{"type":"text","text":"Looking at the handler."},)"
                              R"({"type":"tool_call","id":"c1","name":"grep",)"
                              R"("args":{"pattern":"reconnectDelay"}}]})"));
  std::string t = f.add(tool_output("c1", "src/net/socket.ts:42: const reconnectDelay = 500;"));
  std::string s = f.add(
      event("CompactionCompleted", "host",
            R"({"summary":"user wants the websocket fixed","first_kept_event_id":")" + p + "\"}"));
  CHECK(f.found("websocket") == std::vector<std::string>{s, p}); // shorter text ranks first
  CHECK(f.found("handler") == std::vector<std::string>{a});
  CHECK(f.found("grep") == std::vector<std::string>{a}); // a tool call's name
  std::vector<std::string> h = f.hits("flaky");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "session_id") == "s");
  CHECK(field(h[0], "event_id") == p);
  CHECK(field(h[0], "seq") == "2");
  CHECK(field(h[0], "role") == "user");
  CHECK(field(h[0], "type") == "UserPromptSubmitted");
  CHECK(field(h[0], "match") == "words");
  CHECK(field(h[0], "snippet") == "please fix the «flaky» websocket reconnect");
  CHECK(std::stod(field(h[0], "rank")) < 0); // bm25: lower is better
  // Case and diacritics fold; every term is required.
  CHECK(f.found("WEBSOCKET Fixed") == std::vector<std::string>{s});
  CHECK(f.found("nothing-like-this").empty());
}

TEST_CASE("search: pieces of identifiers and paths are found as substrings") {
  Fixture f;
  f.add(call("c1"));
  std::string out =
      f.add(tool_output("c1", "error in src/ctxdb/engine_main.cpp: undefined ctxdb_open_v2"));
  std::string p = f.add(prompt("what does reconnectDelay do?"));
  // Whole words come from the words table...
  std::vector<std::string> h = f.hits("engine_main");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "match") == "words");
  // ...pieces of them from the trigram table.
  h = f.hits("ngine_ma");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "event_id") == out);
  CHECK(field(h[0], "match") == "substring");
  CHECK(field(h[0], "snippet").find("«ngine_ma»") != std::string::npos);
  CHECK(f.found("ctxdb/engine") == std::vector<std::string>{out});
  CHECK(f.found("open_v") == std::vector<std::string>{out});
  CHECK(f.found("ConnectDel") == std::vector<std::string>{p}); // case folded
  CHECK(f.found(".cpp:") == std::vector<std::string>{out});
}

TEST_CASE("search: Chinese and Japanese, inside sentences, of any length") {
  Fixture f;
  std::string zh = f.add(prompt("数据库连接错误，请检查配置文件"));
  std::string ja = f.add(prompt("設定ファイルを読み込みます"));
  std::string en = f.add(prompt("the database connection failed"));
  // Each CJK character is a word of the words table (search_tokenizer.hpp),
  // so a CJK word is a phrase found from the index at any length.
  std::vector<std::string> h = f.hits("连接错误");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "event_id") == zh);
  CHECK(field(h[0], "match") == "words");
  CHECK(field(h[0], "snippet") == "数据库«连接错误»，请检查配置文件");
  CHECK(f.found("読み込み") == std::vector<std::string>{ja});
  CHECK(f.found("ファイル") == std::vector<std::string>{ja});
  h = f.hits("错误");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "event_id") == zh);
  CHECK(field(h[0], "match") == "words");
  CHECK(field(h[0], "snippet") == "数据库连接«错误»，请检查配置文件");
  CHECK(f.found("設") == std::vector<std::string>{ja});
  CHECK(f.found("误错").empty()); // the characters in that order, side by side
  // Inside FTS5 expressions too, which no trigram or scan could answer.
  CHECK(sorted(f.found("错误 OR failed")) == sorted({zh, en}));
  CHECK(f.found("错误 NOT 配置").empty());
  CHECK(f.found("(设定 OR 設定) AND 読み") == std::vector<std::string>{ja});
  // A short term beside a longer one filters what the longer one finds.
  CHECK(f.found("配置文件 错误") == std::vector<std::string>{zh});
  CHECK(f.found("配置文件 設定").empty());
  CHECK(f.found("database") == std::vector<std::string>{en});
}

TEST_CASE("search: migration 017 makes the words a file indexed before it find CJK words") {
  TempDir dir;
  std::string path = dir.file("a.ctxdb"), zh;
  {
    Engine db(path, "");
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
    zh = id_of(db.append("s", prompt("数据库连接错误，请检查配置文件")));
    CHECK(items(field(db.search("错误", ""), "hits")).size() == 1); // indexes it
  }
  raw_sql(path, kBeforeSchema17 + "PRAGMA user_version = 16;");
  // The raw connection reads the old table: the sentence is one word.
  CHECK(raw_int(path, "SELECT count(*) FROM search_words('数据库连接错误')") == 1);
  Engine reopened(path, "");
  CHECK(raw_int(path, "PRAGMA user_version") == store::schema_version());
  std::vector<std::string> h = items(field(reopened.search("错误 OR timeout", ""), "hits"));
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "event_id") == zh);
  CHECK(field(h[0], "match") == "words");
  CHECK(field(reopened.rebuild(R"({"check":true,"search":true})"), "identical") == "true");
}

TEST_CASE("search: filters by session, role, type, time and limit") {
  Fixture f;
  f.db.session_create(R"({"id":"t","payload":{"agent_id":"a"}})");
  std::string p1 =
      f.add(event("UserPromptSubmitted", "user", R"({"text":"deploy the api"})", R"("ts":1000)"));
  f.add(event("AssistantMessageCreated", "assistant",
              R"({"content":[{"type":"tool_call","id":"c1","name":"deploy","args":"api"}]})",
              R"("ts":2000)"));
  std::string failed =
      f.add(event("ToolCallFailed", "tool",
                  R"({"tool_call_id":"c1","error":"deploy of api refused"})", R"("ts":3000)"));
  std::string other = id_of(f.db.append("t", prompt("deploy elsewhere", R"("ts":4000)")));

  CHECK(f.found("deploy", R"({"limit":10})").size() == 4);
  CHECK(f.found("deploy", R"({"session_id":"t"})") == std::vector<std::string>{other});
  CHECK(f.found("deploy", R"({"role":"user","session_id":"s"})") == std::vector<std::string>{p1});
  CHECK(f.found("deploy", R"({"role":"tool"})") == std::vector<std::string>{failed});
  CHECK(f.found("deploy", R"({"type":"ToolCallFailed"})") == std::vector<std::string>{failed});
  CHECK(f.found("deploy", R"({"type":"ToolCallFailed","role":"user"})").empty());
  CHECK(f.found("deploy", R"({"since":2000,"until":3000})").size() == 2);
  CHECK(f.found("deploy", R"({"since":3500})") == std::vector<std::string>{other});
  CHECK(f.found("deploy", R"({"limit":1})").size() == 1);
  CHECK(f.found("deploy", R"({"type":"FileRead"})").empty());
}

TEST_CASE("search: a branch's path holds its ancestors' messages, not its siblings'") {
  Fixture f;
  std::string root = f.add(prompt("start the migration"));
  std::string main_only = f.add(prompt("use postgres on main"));
  std::string fork_first = f.add(prompt("try sqlite on the fork", after(root)));
  std::string fork_id = fork_first; // a branch is named by the event that opened it
  f.add(prompt("sqlite works on the fork too", on(fork_id)));

  CHECK(f.found("sqlite").size() == 2); // every branch
  CHECK(f.found("sqlite", R"({"session_id":"s","branch_id":"main"})").empty());
  CHECK(f.found("postgres", R"({"session_id":"s","branch_id":"main"})") ==
        std::vector<std::string>{main_only});
  CHECK(f.found("postgres", R"({"branch_id":")" + fork_id + "\"}").empty());
  CHECK(f.found("migration", R"({"branch_id":")" + fork_id + "\"}") ==
        std::vector<std::string>{root});
  std::vector<std::string> h = f.hits("fork", R"({"branch_id":")" + fork_id + "\"}");
  CHECK(h.size() == 2);
  CHECK(field(h[0], "branch_id") == fork_id);
  CHECK(field(f.hits("migration")[0], "branch_id") != fork_id); // it is on main
}

TEST_CASE("search: appends after a search are found by the next one") {
  Fixture f;
  f.add(prompt("first kubernetes question"));
  CHECK(f.found("kubernetes").size() == 1);
  std::string second = f.add(prompt("second kubernetes question"));
  CHECK(f.found("kubernetes").size() == 2);
  f.db.append_batch("s", prompt("third kubernetes question") + "\n" + call("c9") + "\n" +
                             tool_output("c9", "kubernetes pods restarted") + "\n");
  CHECK(f.found("kubernetes").size() == 4);
  CHECK(f.found("restarted").size() == 1);
  CHECK(f.found("ubernete").size() == 4); // the trigram table too
}

TEST_CASE("search: rebuild with search re-derives the indexes to the same content") {
  Fixture f;
  std::string p = f.add(prompt("alpha beta 数据库"));
  f.add(call("c1"));
  f.add(tool_output("c1", "gamma delta"));
  f.add(prompt("fork text", after(p)));
  std::string before = f.search("gamma");
  std::string report = f.db.rebuild(R"({"check":true,"search":true})");
  CHECK(field(report, "identical") == "true");
  CHECK(report.find(R"("table":"search_words","rows":4)") != std::string::npos);
  CHECK(report.find(R"("table":"search_grams","rows":4)") != std::string::npos);
  CHECK(field(report, "kept") == "[]");
  CHECK(f.search("gamma") == before);
  // Appends after a rebuild go on the rebuilt indexes, and a second
  // rebuild still gives the same content.
  f.add(prompt("epsilon"));
  CHECK(field(f.db.rebuild(R"({"check":true,"search":true})"), "identical") == "true");
  CHECK(f.found("据库").size() == 1);
}

TEST_CASE("search: a rejected append leaves the indexes as they were") {
  Fixture f;
  f.add(prompt("kept"));
  std::string before = snapshot(f.db);
  // A result whose call is not on the branch is rejected after the prompt
  // of the same batch was placed.
  CHECK(code_of([&] {
          f.db.append_batch("s", prompt("rolled back words") + "\n" + finished("nope") + "\n");
        }) == Code::kNotFound); // no call "nope" on the branch
  CHECK(snapshot(f.db) == before);
  CHECK(f.found("rolled").empty());
}

TEST_CASE("search: text that is not FTS5 syntax is searched as plain words") {
  Fixture f;
  std::string p = f.add(prompt(R"(run \"make test\" in build/ (C++ NOT rust) key:value)"));
  for (const char *q : {"\"make test", "build/", "(C++", "NOT", "key:value", "C++ NOT", "*", "-x",
                        "AND OR", "NEAR(", "^"}) {
    INFO(q);
    std::string r;
    CHECK(code_of([&] { r = f.search(q); }) == Code::kOk);
    CHECK(field(r, "syntax") == "plain");
  }
  CHECK(f.found("build/") == std::vector<std::string>{p});
  CHECK(f.found("key:value") == std::vector<std::string>{p});
  CHECK(f.found("(C++") == std::vector<std::string>{p});
  // Syntax that parses is used as such.
  std::string r = f.search("rust OR zebra");
  CHECK(field(r, "syntax") == "fts");
  CHECK(column(field(r, "hits"), "event_id") == std::vector<std::string>{p});
  CHECK(f.found("\"make test\"") == std::vector<std::string>{p});
  CHECK(f.found("mak*") == std::vector<std::string>{p});
  CHECK(f.found("rust NOT make").empty());
  CHECK(f.found("\"\"").empty()); // an empty phrase parses, and finds nothing
}

TEST_CASE("search: a sensitive event is a hit only when allow_sensitive says so") {
  Fixture f;
  // Every form of visibility that withholds an event from a bundle...
  std::vector<std::string> hidden;
  for (const char *v : {R"("sensitive")", R"("private")", R"("secret")", R"({"level":"secret"})",
                        R"({"sensitive":true})"})
    hidden.push_back(f.add(prompt("kestrel kestrel: the vault token 数据库密码错误 ->",
                                  std::string(R"("visibility":)") + v)));
  // ...and forms that do not.
  std::vector<std::string> shown;
  for (const char *v : {R"("model")", R"({"sensitive":false})", R"({"level":"public"})"})
    shown.push_back(f.add(prompt("an ordinary kestrel sighting 数据库密码错误 ->",
                                 std::string(R"("visibility":)") + v)));
  shown.push_back(f.add(prompt("kestrel again 数据库密码错误 ->")));
  std::vector<std::string> all = hidden;
  all.insert(all.end(), shown.begin(), shown.end());
  // Words, substrings, FTS5 syntax, a scan (two CJK characters, symbols):
  // each way of finding leaves them out.
  for (const char *q : {"kestrel", "estre", "kestrel OR vault", "错误", "->"}) {
    CAPTURE(q);
    CHECK(sorted(f.found(q)) == sorted(shown));
    CHECK(sorted(f.found(q, R"({"allow_sensitive":true})")) == sorted(all));
    CHECK(sorted(f.found(q, R"({"allow_sensitive":false})")) == sorted(shown));
  }
  CHECK(f.found("vault").empty());
  // A left-out event takes no place in the limit: the hidden ones rank
  // first (the word twice), the one hit is a shown one.
  std::vector<std::string> best = f.found("kestrel", R"({"allow_sensitive":true,"limit":1})");
  REQUIRE(best.size() == 1);
  CHECK(std::find(hidden.begin(), hidden.end(), best[0]) != hidden.end());
  best = f.found("kestrel", R"({"limit":1})");
  REQUIRE(best.size() == 1);
  CHECK(std::find(shown.begin(), shown.end(), best[0]) != shown.end());
  // With the other filters.
  CHECK(f.found("kestrel", R"({"role":"user","since":0})").size() == shown.size());
  CHECK(code_of([&] { f.search("x", R"({"allow_sensitive":1})"); }) == Code::kInvalidArg);
}

TEST_CASE("search: bad input is an error code, never a crash") {
  Fixture f;
  f.add(prompt("something"));
  CHECK(code_of([&] { f.search(""); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.search(" \t\n　"); }) == Code::kInvalidArg); // U+3000 too
  CHECK(code_of([&] { f.search("x", R"({"session_id":"nope"})"); }) == Code::kNotFound);
  CHECK(code_of([&] { f.search("x", R"({"session_id":"s","branch_id":"nope"})"); }) ==
        Code::kNotFound);
  CHECK(code_of([&] { f.search("x", R"({"branch_id":"evt_nope"})"); }) == Code::kNotFound);
  CHECK(code_of([&] { f.search("x", R"({"limit":0})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.search("x", R"({"role":"robot"})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.search("x", R"({"colour":1})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.search("x", "{"); }) == Code::kInvalidJson);
}

// --- Deferred indexing (schema/sql/009): appends leave the index behind,
// searches bring it up to date or search the events above the mark.

namespace {

int64_t mark_of(const std::string &path) { return raw_int(path, "SELECT pos FROM search_mark"); }
int64_t last_pos_of(const std::string &path) {
  return raw_int(path, "SELECT max(pos) FROM events");
}

// A search's hits without their ranks, in a canonical order: what must not
// depend on how far the index is behind (bm25 does; search_index.hpp).
std::vector<std::string> unranked(const std::string &result) {
  std::vector<std::string> out;
  for (const std::string &h : items(field(result, "hits")))
    out.push_back(field(h, "event_id") + " " + field(h, "match") + " " + field(h, "snippet"));
  std::sort(out.begin(), out.end());
  return out;
}

const char *const kQueries[] = {
    "websocket",     "reconnect websocket", "ngine_ma",         "连接错误", "错误",
    "rust OR zebra", "\"flaky websocket",   "handle_request_7", "mod_3."};

void add_corpus(Fixture &f, int from, int to) {
  for (int i = from; i < to; ++i) {
    f.add(prompt("fix the flaky websocket reconnect " + std::to_string(i) + " in handle_request_" +
                 std::to_string(i % 10) + " of src/pkg/mod_" + std::to_string(i % 5) + ".py"));
    f.add(prompt(i % 3 ? "数据库连接错误 rust" : "这个函数的返回值错误 zebra websocket"));
    f.add(call("c" + std::to_string(i)));
    f.add(tool_output("c" + std::to_string(i),
                      "error in src/ctxdb/engine_main.cpp line " + std::to_string(i)));
  }
}

} // namespace

TEST_CASE("search: an append leaves the index behind; a search catches it up") {
  Fixture f;
  std::string path = f.dir.file("s.ctxdb");
  add_corpus(f, 0, 3);
  CHECK(mark_of(path) < last_pos_of(path)); // appended, not indexed
  CHECK(raw_int(path, "SELECT count(*) FROM search_words_docsize") == 0);
  CHECK(f.found("websocket").size() == 4);
  CHECK(mark_of(path) == last_pos_of(path));
  CHECK(raw_int(path, "SELECT count(*) FROM search_words_docsize") == 12);
}

TEST_CASE("search: a read-only handle finds the events above the mark, as a caught-up index") {
  Fixture f;
  std::string path = f.dir.file("s.ctxdb");
  add_corpus(f, 0, 6);
  f.search("websocket"); // indexes the first half
  add_corpus(f, 6, 12);
  REQUIRE(mark_of(path) < last_pos_of(path));
  Engine ro(path, R"({"read_only":true})");
  std::vector<std::vector<std::string>> behind;
  for (const char *q : kQueries) behind.push_back(unranked(ro.search(q, R"({"limit":100})")));
  CHECK(mark_of(path) < last_pos_of(path)); // the read-only handle wrote nothing
  f.search("websocket");
  REQUIRE(mark_of(path) == last_pos_of(path));
  for (size_t i = 0; i < std::size(kQueries); ++i) {
    INFO(kQueries[i]);
    std::vector<std::string> caught_up = unranked(f.search(kQueries[i], R"({"limit":100})"));
    CHECK(!caught_up.empty());
    CHECK(behind[i] == caught_up);
  }
  // The private copy follows later appends, and starts again once the
  // mark has passed it.
  add_corpus(f, 12, 13);
  CHECK(column(field(ro.search("\"reconnect 12\"", ""), "hits"), "match") ==
        std::vector<std::string>{"words"});
  f.search("websocket");
  add_corpus(f, 13, 14);
  CHECK(items(field(ro.search("\"reconnect 13\"", ""), "hits")).size() == 1);
  CHECK(items(field(ro.search("\"reconnect 12\"", ""), "hits")).size() == 1);
}

TEST_CASE("search: while another writer holds the lock, a search neither waits nor misses") {
  Fixture f;
  std::string path = f.dir.file("s.ctxdb");
  add_corpus(f, 0, 4);
  sqlite3 *other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK);
  std::vector<std::string> locked;
  CHECK(code_of([&] { locked = unranked(f.search("websocket", R"({"limit":100})")); }) ==
        Code::kOk);
  CHECK(mark_of(path) < last_pos_of(path));
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  CHECK(locked.size() == 6);
  CHECK(unranked(f.search("websocket", R"({"limit":100})")) == locked);
  CHECK(mark_of(path) == last_pos_of(path));
}

TEST_CASE("search: another handle's appends after our catch-up are found by our next search") {
  Fixture f;
  std::string path = f.dir.file("s.ctxdb");
  add_corpus(f, 0, 2);
  CHECK(f.found("reconnect").size() == 2); // caught up
  Engine other(path, "");
  other.append("s", prompt("reconnect from the other process"));
  CHECK(mark_of(path) < last_pos_of(path));
  CHECK(f.found("reconnect").size() == 3);
  CHECK(mark_of(path) == last_pos_of(path));
  CHECK(other.search("process", "").find("the other «process»") != std::string::npos);
}

TEST_CASE("search: a rebuild keeps the indexes of the log unless asked, caught up") {
  Fixture f;
  std::string path = f.dir.file("s.ctxdb");
  add_corpus(f, 0, 2);
  f.search("websocket");
  add_corpus(f, 2, 3); // not indexed yet: the rebuild must catch it up
  CHECK(mark_of(path) < last_pos_of(path));
  std::string report = f.db.rebuild(R"({"check":true})");
  CHECK(field(report, "identical") == "true");
  CHECK(field(report, "kept") == R"(["search_words","search_grams","search_mark"])");
  CHECK(report.find(R"("table":"search_words")") == std::string::npos); // not compared...
  CHECK(mark_of(path) == last_pos_of(path));                            // ... but caught up
  std::vector<std::string> kept = unranked(f.search("websocket", R"({"limit":100})"));
  // What the kept index holds is what indexing the log afresh gives: the
  // re-derivation compares the two and finds them identical.
  report = f.db.rebuild(R"({"check":true,"search":true})");
  CHECK(field(report, "identical") == "true");
  CHECK(field(report, "kept") == "[]");
  CHECK(unranked(f.search("websocket", R"({"limit":100})")) == kept);
}

TEST_CASE("search: rebuild with search indexes the whole log, whatever the mark") {
  Fixture f;
  std::string path = f.dir.file("s.ctxdb");
  add_corpus(f, 0, 2);
  f.search("websocket");
  add_corpus(f, 2, 4); // not indexed yet
  std::string report = f.db.rebuild(R"({"check":true,"search":true})");
  CHECK(field(report, "identical") == "true");
  CHECK(report.find(R"("table":"search_words","rows":16)") != std::string::npos);
  CHECK(mark_of(path) == last_pos_of(path));
  // A rebuild without the check indexes everything too.
  add_corpus(f, 4, 5);
  f.db.rebuild(R"({"search":true})");
  CHECK(mark_of(path) == last_pos_of(path));
  CHECK(raw_int(path, "SELECT count(*) FROM search_grams_docsize") == 20);
}

TEST_CASE("search: imported events are found, indexed or not") {
  Fixture f;
  add_corpus(f, 0, 3);
  std::string exported = export_all(f.db);
  TempDir dir;
  std::string copy_path = dir.file("copy.ctxdb");
  {
    Engine copy(copy_path, "");
    copy.import(exported);
    CHECK(mark_of(copy_path) < last_pos_of(copy_path));
    Engine ro(copy_path, R"({"read_only":true})");
    CHECK(unranked(ro.search("engine_main", R"({"limit":100})")) ==
          unranked(f.search("engine_main", R"({"limit":100})")));
    CHECK(unranked(copy.search("engine_main", R"({"limit":100})")) ==
          unranked(f.search("engine_main", R"({"limit":100})")));
  }
  CHECK(mark_of(copy_path) == last_pos_of(copy_path));
}

TEST_CASE("search: forgetting a memory, even purging it, leaves session search whole") {
  Fixture f;
  std::string path = f.dir.file("s.ctxdb");
  std::string p = f.add(prompt("the deploy key is in the vault"));
  f.search("vault");
  std::string m = f.add(event("MemoryWritten", "agent",
                              R"({"memory_id":"k","scope":"session","kind":"fact",)"
                              R"("content":"deploy key in vault","source_refs":[")" +
                                  p + R"("]})"));
  std::string q = f.add(prompt("rotate the vault key"));
  f.db.memory_forget("k", R"({"mode":"purge"})");
  REQUIRE(mark_of(path) < last_pos_of(path));
  Engine ro(path, R"({"read_only":true})");
  std::vector<std::string> behind = unranked(ro.search("vault", R"({"limit":100})"));
  CHECK(behind.size() == 2);
  CHECK(unranked(f.search("vault", R"({"limit":100})")) == behind);
  CHECK(field(f.db.verify(std::nullopt), "ok") == "true");
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("search: a branch summary is found like a message, by word and by role") {
  Fixture f;
  std::string leaf = f.add(prompt("try the quokka approach"));
  std::string summary =
      f.add(R"({"type":"BranchSummarized","actor":"host","payload":{"text":"the abandoned branch )"
            R"(tried memoization and gave up","summary":{},"from_leaf_event_id":")" +
            leaf + R"("}})");
  CHECK(f.found("memoization") == std::vector<std::string>{summary});
  CHECK(f.found("memoiz") == std::vector<std::string>{summary}); // a substring: trigrams
  CHECK(f.found("memoization", R"({"role":"user"})") == std::vector<std::string>{summary});
  CHECK(f.found("memoization", R"({"role":"assistant"})").empty());
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("search: a commit that leaves the index search_index_lag events behind indexes it") {
  Fixture f;
  std::string path = f.dir.file("s.ctxdb");
  std::string nd;
  for (int64_t i = 0; i <= store::Config{}.search_index_lag; ++i)
    nd += prompt("bulk " + std::to_string(i)) + "\n";
  f.db.append_batch("s", nd);
  CHECK(mark_of(path) == last_pos_of(path));
  f.add(prompt("one more"));
  CHECK(mark_of(path) < last_pos_of(path));
}

TEST_CASE("search: search_index_lag 0 indexes in every append; a large one leaves it to search") {
  Fixture f; // creates session s
  std::string path = f.dir.file("s.ctxdb");
  {
    Engine eager(path, R"({"search_index_lag":0})");
    eager.append("s", prompt("eager vault"));
    CHECK(mark_of(path) == last_pos_of(path));
  }
  Engine lazy(path, R"({"search_index_lag":1000000})");
  std::string nd;
  for (int i = 0; i < 50; ++i) nd += prompt("lazy " + std::to_string(i)) + "\n";
  lazy.append_batch("s", nd);
  CHECK(mark_of(path) < last_pos_of(path));
  CHECK(unranked(lazy.search("lazy", R"({"limit":100})")).size() == 50);
  CHECK(mark_of(path) == last_pos_of(path)); // the search caught up
  CHECK(code_of([&] { Engine bad(path, R"({"search_index_lag":-1})"); }) == Code::kInvalidArg);
}

TEST_CASE("search: NOT with a short term does not let the excluded messages back in") {
  // The trigram table cannot match a term under 3 characters: there,
  // "rust NOT ab" would mean every rust message.
  Fixture f;
  f.add(prompt("rust ab"));
  std::string with_cd = f.add(prompt("rust cd"));
  std::string with_zh = f.add(prompt("rust 错误"));
  std::vector<std::string> got = f.found("rust NOT ab");
  std::sort(got.begin(), got.end());
  std::vector<std::string> want{with_cd, with_zh};
  std::sort(want.begin(), want.end());
  CHECK(got == want);
}

TEST_CASE("search: a term of symbols alone is required, and found") {
  Fixture f;
  f.add(prompt("fix the websocket now"));
  std::string arrow = f.add(prompt("websocket -> handler"));
  std::string check = f.add(prompt("build ✅ done"));
  CHECK(f.found("websocket ->") == std::vector<std::string>{arrow}); // every term required
  CHECK(f.found("->") == std::vector<std::string>{arrow});
  CHECK(f.found("✅") == std::vector<std::string>{check});
}

TEST_CASE("search: a thousand short terms and a path of a thousand runs are searched") {
  // SQLite refuses an expression nested past 1000 levels: the terms' and
  // the runs' conditions are nested as balanced trees.
  Fixture f;
  std::string root = f.add(prompt("root"));
  f.add(prompt("main 0"));
  std::string fork_id = f.add(prompt("fork 0", after(root)));
  std::string nd; // main and the fork appended to in turn: a run each
  for (int i = 1; i < 1100; ++i)
    nd += prompt("main " + std::to_string(i) + " x") + "\n" +
          prompt("fork " + std::to_string(i), on(fork_id)) + "\n";
  f.db.append_batch("s", nd);
  std::string q = "main";
  for (int i = 0; i < 1000; ++i) q += " x";
  CHECK(f.found(q, R"({"limit":5})").size() == 5);
  CHECK(f.found("main", R"({"session_id":"s","branch_id":"main","limit":5})").size() == 5);
  CHECK(f.found("fork", R"({"branch_id":")" + fork_id + R"(","limit":5})").size() == 5);
}

TEST_CASE("search: a NUL byte in a query separates terms, as a space does") {
  Fixture f;
  std::string both = f.add(prompt("foo bar"));
  f.add(prompt("foo alone"));
  CHECK(f.found(std::string("foo\0bar", 7)) == std::vector<std::string>{both});
  CHECK(f.found(std::string("\"foo\0bar\"", 9)) == std::vector<std::string>{both});
}

// FTS5 ends a term at any character that is not a bareword character, not
// only at white space: `NOT(ab)`, `NOT"ab"` and `ab+cd` hold the short term
// "ab". The excluded message came back as a substring hit (review, session
// 26); a query with NOT has no substring step now.
TEST_CASE("search: NOT with a short term not set off by spaces excludes it") {
  Fixture f;
  std::string kept = f.add(prompt("kestrel cd"));
  f.add(prompt("kestrel ab cd")); // excluded by each query below
  for (const char *q :
       {"kestrel NOT ab", "kestrel NOT(ab)", "kestrel NOT\"ab\"", "kestrel NOT ab+cd"}) {
    CAPTURE(q);
    CHECK(field(f.search(q), "syntax") == "fts");
    CHECK(f.found(q) == std::vector<std::string>{kept});
  }
}

// The same with a long term: NOT excludes what the words table matches
// (diacritics folded, punctuation a separator), and the trigram table
// matches less (`café` is not in "cafe", `"src/net"` is not in "src-net"):
// its `kestrel NOT …` let back in what the words step left out.
TEST_CASE("search: NOT excludes a message in the substring step as in the words step") {
  Fixture f;
  std::string only = f.add(prompt("kestrel only"));
  std::string cafe = f.add(prompt("kestrel cafe"));       // NOT café excludes it
  std::string src_net = f.add(prompt("kestrel src-net")); // NOT "src/net" excludes it
  CHECK(field(f.search("kestrel NOT café"), "syntax") == "fts");
  CHECK(sorted(f.found("kestrel NOT café")) == sorted({only, src_net}));
  CHECK(sorted(f.found("kestrel NOT \"src/net\"")) == sorted({only, cafe}));
}

// A two-character Chinese word, or a symbol, is found inside a sentence by
// the scan (README "## Search", step 2); quoted, as one term, it is the
// same term (it found nothing: FTS5 syntax has no scan).
TEST_CASE("search: a quoted short Chinese term or symbol is found like an unquoted one") {
  Fixture f;
  std::string zh = f.add(prompt("数据库连接错误，请检查配置文件"));
  std::string rocket = f.add(prompt("ready for 🚀 launch"));
  CHECK(f.found("错误") == std::vector<std::string>{zh});
  CHECK(f.found("\"错误\"") == std::vector<std::string>{zh});
  CHECK(f.found("🚀") == std::vector<std::string>{rocket});
  CHECK(f.found("\"🚀\"") == std::vector<std::string>{rocket});
}

// unicode61 separates words at every character that is not a letter or a
// digit, so "°", "±", "©", "£" and the fullwidth "！" have no word token,
// like "->": a term of them alone is scanned for, as "->" is (they were
// taken for words, which no step then found).
TEST_CASE("search: a term of one Latin-1 or fullwidth symbol is found") {
  Fixture f;
  std::string p = f.add(prompt("water boils at 100 °C ± 1, © acme, £5 a bottle！"));
  CHECK(f.found("->").empty());
  for (const char *q : {"°", "±", "©", "£", "！"}) {
    CAPTURE(q);
    CHECK(f.found(q) == std::vector<std::string>{p});
  }
}

// A snippet is the message's text with the match between « and » (and …
// where cut): without its marks it is a piece of that text. Where a
// substring's matches overlap ("issi" twice in "mississippi"), SQLite
// 3.40's snippet() over the trigram table repeated parts of the text.
TEST_CASE("search: a substring snippet repeats no text when matches overlap") {
  Fixture f;
  const std::string river = "mississippi river";
  const std::string run = "xx aaaaaaa yy";
  f.add(prompt(river));
  f.add(prompt(run));
  for (auto [q, text] : {std::pair{"issi", river}, std::pair{"aaa", run}}) {
    CAPTURE(q);
    std::vector<std::string> h = f.hits(q);
    REQUIRE(h.size() == 1);
    CHECK(field(h[0], "match") == "substring");
    std::string snippet = field(h[0], "snippet");
    CAPTURE(snippet);
    CHECK(text.find(unmarked(snippet)) != std::string::npos);
  }
}

// The FTS5 tables fold case by Unicode (unicode61 and trigram alike); the
// checks the index cannot make (a term too short for the trigram table, the
// scan) folded ASCII only, with SQLite's lower(), so "üb" missed "ÜBER"
// and a substring snippet marked nothing when the case differed.
TEST_CASE("search: short terms and snippet marks fold non-ASCII case as the indexes do") {
  Fixture f;
  std::string de = f.add(prompt("ÄRGER ÜBER ALLES"));
  std::string el = f.add(prompt("ΣΦΑΛΜΑ -> 数据库"));
  std::string go = f.add(prompt("golang错误日志, 山田㈱の報告, 面积100㎡"));
  std::string kelvin = f.add(prompt("cooled to 4\u212Aelvin -> 冷却"));
  f.add(prompt("ärger ohne ende"));
  // A long term from the trigram table, a short one checked on the text.
  std::vector<std::string> h = f.hits("ärger üb");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "event_id") == de);
  CHECK(field(h[0], "match") == "substring");
  CHECK(field(h[0], "snippet") == "«ÄRGER» ÜBER ALLES");
  // The scan (a term of symbols alone has no index): a short Greek term
  // beside it is checked on the text.
  h = f.hits("-> σφ");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "event_id") == el);
  CHECK(field(h[0], "match") == "scan");
  CHECK(field(h[0], "snippet") == "ΣΦΑΛΜΑ «->» 数据库");
  CHECK(f.hits("-> ψω").empty());
  // A short CJK word beside short pieces of words, and CJK symbols (which
  // unicode61 makes no word of) are scanned for too.
  h = f.hits("数据 σφ");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "event_id") == el);
  CHECK(field(h[0], "match") == "scan");
  CHECK(field(h[0], "snippet") == "ΣΦΑΛΜΑ -> «数据»库");
  CHECK(f.found("错误 GO") == std::vector<std::string>{go});
  CHECK(f.found("㈱") == std::vector<std::string>{go});
  CHECK(f.found("㎡") == std::vector<std::string>{go});
  // A match may differ from its term in length: the Kelvin sign (three
  // bytes) folds to "k", and the mark spans the match, not the term.
  h = f.hits("k ->");
  REQUIRE(h.size() == 1);
  CHECK(field(h[0], "event_id") == kelvin);
  CHECK(field(h[0], "match") == "scan");
  CHECK(field(h[0], "snippet") == "cooled to 4«\u212A»elvin -> 冷却");
}

// PCRE2 cannot compile a caseless literal of tens of kilobytes: such a
// needle is searched for with ASCII folded instead of failing the search.
TEST_CASE("search: a term too long for PCRE2 is still searched for") {
  Fixture f;
  std::string dashes(40000, '-');
  std::string p = f.add(prompt("websocket " + dashes));
  CHECK(f.found(std::string(40000, 'x')).empty());
  CHECK(f.found("websocket " + dashes) == std::vector<std::string>{p});
  CHECK(f.found("websocket " + dashes + "+").empty());
  std::vector<std::string> h = f.hits(dashes + " " + std::string(30000, 'E'));
  CHECK(h.empty());
}

TEST_CASE("search: snippets show no secret a compiled bundle redacts") {
  Fixture f;
  // An Anthropic key splits into six words: a snippet cut from the stored
  // text could begin inside it, where its rest is no longer recognizable.
  const std::string key = "sk-ant-api03-GA3cCcYseu52C5CdYP2hMqBgNjjNMu1GqbeB6veWzSmA3y-nXL-cPZKcuz";
  const std::string marker = "[REDACTED:anthropic_api_key]";
  f.add(prompt("deploy with " + key + " today"));
  f.add(prompt(key + " one two three four five six seven eight nine ten eleven twelve rollout"));
  f.add(event("AssistantMessageCreated", "assistant",
              R"({"content":[{"type":"text","text":"exported ANTHROPIC_API_KEY=)" + key +
                  R"( for the canary"}]})"));
  auto shows_key = [&](const std::string &snippet) {
    for (const char *piece : {"GA3cCcYseu52", "nXL-cPZKcuz", "cPZKcuz"})
      if (snippet.find(piece) != std::string::npos) return true;
    return false;
  };
  for (const char *q : {"deploy", "today", "rollout", "canary", "ollou"}) {
    CAPTURE(q);
    std::vector<std::string> h = f.hits(q);
    REQUIRE(h.size() == 1);
    std::string snippet = field(h[0], "snippet");
    CHECK(!shows_key(snippet));
    CHECK(snippet.find("«") != std::string::npos); // the match is still marked
    // Beside the match, the secret shows as its redaction marker.
    if (std::string_view(q) != "rollout" && std::string_view(q) != "ollou")
      CHECK(snippet.find(marker) != std::string::npos);
  }
  CHECK(field(f.hits("rollout")[0], "snippet").find("«rollout»") != std::string::npos);
  CHECK(field(f.hits("ollou")[0], "match") == "substring");
  // What holds no secret keeps FTS5's snippet.
  f.add(prompt("plain words about the rollout plan"));
  CHECK(field(f.hits("plan")[0], "snippet") == "plain words about the rollout «plan»");
}

TEST_CASE("artifact search: matched and context lines show no secret") {
  TempDir dir;
  Engine db(dir.file("a.ctxdb"), "");
  const std::string key = "sk-ant-api03-GA3cCcYseu52C5CdYP2hMqBgNjjNMu1GqbeB6veWzSmA3y-nXL-cPZKcuz";
  std::string id = id_of(db.artifact_put(
      "export ANTHROPIC_API_KEY=" + key + "\nrun deploy\n" + "token " + key + " again\n", ""));
  std::string r = db.artifact_search(id, "deploy", R"({"before":1,"after":1})");
  CHECK(r.find("GA3cCcYseu52") == std::string::npos);
  CHECK(r.find("[REDACTED:anthropic_api_key]") != std::string::npos);
  std::vector<std::string> m = items(field(r, "matches"));
  REQUIRE(m.size() == 1);
  CHECK(field(m[0], "text") == "run deploy");
  CHECK(field(m[0], "line") == "2");
  // A match on the secret itself: the line is shown redacted.
  r = db.artifact_search(id, "again", "");
  CHECK(field(items(field(r, "matches"))[0], "text") == "token [REDACTED:anthropic_api_key] again");
}

} // namespace search_test
