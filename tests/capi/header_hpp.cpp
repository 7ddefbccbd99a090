// header_hpp.cpp — ctxdb.hpp compiles alone as strict C++20 with every
// warning an error, and its wrapper works: RAII, exceptions carrying the
// status code, iteration, moves.
#include <ctxdb/ctxdb.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace {

int failures = 0;

void check(bool ok, int line, const char *what) {
  if (!ok) {
    ++failures;
    std::fprintf(stderr, "%s:%d: CHECK failed: %s\n    ctxdb_errmsg(NULL): %s\n", __FILE__, line,
                 what, ctxdb_errmsg(nullptr));
  }
}
#define CHECK(e) check((e), __LINE__, #e)

template <class F> int code_of(F &&f) {
  try {
    f();
  } catch (const ctxdb::Error &e) {
    CHECK(e.what()[0] != '\0');
    CHECK(std::string(e.name()) == ctxdb_errstr(e.code()));
    return e.code();
  }
  return CTXDB_OK;
}

} // namespace

int main() {
  char dir[] = "/tmp/ctxdb-capi-hpp-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  const std::string path = std::string(dir) + "/w.ctxdb";
  {
    auto db = ctxdb::Database::open(path, R"({"durability":"normal"})");
    std::string s =
        db.session_create(R"({"id":"ses_x","event_id":"x0","payload":{"agent_id":"a"}})");
    CHECK(s.find(R"("id":"ses_x")") != std::string::npos);
    std::string e = db.append("ses_x", R"({"type":"Note","actor":"a","payload":{}})");
    CHECK(e.find(R"("seq":2)") != std::string::npos);
    std::string b =
        db.append_batch("ses_x", "{\"type\":\"Note\",\"actor\":\"a\",\"payload\":{}}\n"
                                 "{\"type\":\"Note\",\"actor\":\"a\",\"payload\":{}}\n");
    CHECK(b.find(R"("count":2)") != std::string::npos);

    int rows = 0;
    std::string_view row;
    for (auto it = db.events("ses_x", 2); it.next(row);) ++rows;
    CHECK(rows == 3);
    rows = 0;
    for (auto it = db.all_events(); it.next(row);) ++rows;
    CHECK(rows == 4);
    rows = 0;
    for (auto it = db.export_stream("ses_x"); it.next(row);) ++rows;
    CHECK(rows == 4); // no artifacts yet
    CHECK(code_of([&] { db.export_stream("ses_nope"); }) == CTXDB_NOT_FOUND);
    CHECK(db.verify().find(R"("ok":true)") != std::string::npos);
    CHECK(db.verify("ses_x").find(R"("ok":true)") != std::string::npos);
    CHECK(db.session_list().front() == '[');
    CHECK(db.session_get("ses_x").find(R"("event_count":4)") != std::string::npos);

    // The session tree: a fork, its path, the branch list, children.
    CHECK(db.branch_fork("ses_x", R"({"event_id":"x0","name":"b","id":"b1"})")
              .find(R"("fork_event_id":"x0")") != std::string::npos);
    rows = 0;
    for (auto it = db.branch_path("ses_x", "b"); it.next(row);) ++rows;
    CHECK(rows == 2);
    rows = 0;
    for (auto it = db.branch_path("ses_x"); it.next(row);) ++rows;
    CHECK(rows == 4);
    CHECK(db.branch_list("ses_x").find(R"("id":"b1")") != std::string::npos);
    CHECK(db.event_children("x0").find(R"("id":"b1")") != std::string::npos);
    CHECK(code_of([&] { db.branch_path("ses_x", "nope"); }) == CTXDB_NOT_FOUND);
    CHECK(code_of([&] { db.branch_path("ses_x", ""); }) == CTXDB_INVALID_ARG);
    CHECK(code_of([&] { db.branch_fork("ses_x", R"({"event_id":"x0","kind":"x"})"); }) ==
          CTXDB_INVALID_ARG);
    CHECK(code_of([&] { db.event_children("evt_nope"); }) == CTXDB_NOT_FOUND);

    // Views of a branch: messages, tool calls, files.
    db.append("ses_x", R"({"type":"UserPromptSubmitted","actor":"user","branch_id":"b",)"
                       R"("payload":{"text":"hi"}})");
    CHECK(db.messages("ses_x", "b").find(R"("role":"user")") != std::string::npos);
    CHECK(db.messages("ses_x") == "[]");
    CHECK(db.tool_calls("ses_x", "b1") == "[]");
    db.append("ses_x", R"({"type":"FileRead","actor":"host","payload":{"path":"a.c"}})");
    CHECK(db.files("ses_x").find(R"("path":"a.c")") != std::string::npos);
    CHECK(code_of([&] { db.messages("ses_x", "nope"); }) == CTXDB_NOT_FOUND);
    CHECK(code_of([&] { db.tool_calls("ses_x", ""); }) == CTXDB_INVALID_ARG);
    CHECK(code_of([&] { db.files("ses_nope"); }) == CTXDB_NOT_FOUND);

    // State and stats.
    CHECK(db.state("ses_x").find(R"("state":{"goal":)") != std::string::npos);
    CHECK(db.state("ses_x", R"({"branch_id":"b"})").find(R"("branch_id":"b1")") !=
          std::string::npos);
    CHECK(db.stats("ses_x").find(R"("session_id":"ses_x")") != std::string::npos);
    CHECK(db.stats().find(R"("session_id":null)") != std::string::npos);
    CHECK(code_of([&] { db.state("ses_x", R"({"colour":1})"); }) == CTXDB_INVALID_ARG);
    CHECK(code_of([&] { db.state("ses_x", "{"); }) == CTXDB_INVALID_JSON);
    CHECK(code_of([&] { db.stats("ses_nope"); }) == CTXDB_NOT_FOUND);

    CHECK(code_of([&] { db.session_get("ses_nope"); }) == CTXDB_NOT_FOUND);
    CHECK(code_of([&] { db.append("ses_x", "{"); }) == CTXDB_INVALID_JSON);
    CHECK(code_of([&] { db.append("ses_x", R"({"actor":"a","payload":{}})"); }) ==
          CTXDB_INVALID_ARG);
    CHECK(code_of([&] { db.event_get("evt_nope"); }) == CTXDB_NOT_FOUND);
    CHECK(code_of([&] { ctxdb::Database::open(path, R"({"bogus":1})"); }) == CTXDB_INVALID_ARG);

    // Compaction: a C++ summarizer through the wrapper; what it throws
    // becomes CTXDB_CHECK_FAILED, never an exception across the C ABI.
    CHECK(db.compact_should("ses_x").find(R"("level":"ok")") != std::string::npos);
    const char *on_b = R"({"branch_id":"b","keep_recent_tokens":0})";
    CHECK(db.compact("ses_x", on_b).find(R"("status":"compacted")") != std::string::npos);
    ctxdb::Database::Summarizer throws = [](std::string_view) -> std::string {
      throw std::runtime_error("no model");
    };
    db.append("ses_x", R"({"type":"UserPromptSubmitted","actor":"user","branch_id":"b",)"
                       R"("payload":{"text":"again"}})");
    CHECK(code_of([&] { db.compact("ses_x", on_b, &throws); }) == CTXDB_CHECK_FAILED);
    CHECK(db.compactions("ses_x", "b").find(R"("checks":)") != std::string::npos);

    // The streaming put: pieces in, the artifact out; an abort keeps
    // nothing; other calls throw while a writer is open.
    {
      auto w = db.artifact_writer(R"({"kind":"command_log"})");
      w.write("line 1\n");
      CHECK(code_of([&] { db.session_list(); }) == CTXDB_MISUSE);
      w.write(std::string(300000, 'x'));
      std::string art = w.commit();
      CHECK(art.find(R"("raw_size":300007)") != std::string::npos);
      CHECK(code_of([&] { w.write("more"); }) == CTXDB_MISUSE);
      CHECK(db.artifact_put("line 1\n" + std::string(300000, 'x')) ==
            db.artifact_info(art.substr(art.find("art_"), 68)));
    }
    {
      std::string before = db.artifact_list();
      auto w = db.artifact_writer();
      w.write("never stored");
      w.abort();
      CHECK(code_of([&] { w.write("x"); }) == CTXDB_MISUSE);
      CHECK(db.artifact_list() == before);
      CHECK(code_of([&] { db.artifact_writer("{"); }) == CTXDB_INVALID_JSON);
    }

    // Moves hand the handle over; close() is explicit and final.
    ctxdb::Database moved = std::move(db);
    CHECK(moved.handle() != nullptr && db.handle() == nullptr);
    CHECK(moved.session_list().find("ses_x") != std::string::npos);
    moved.close();
    CHECK(moved.handle() == nullptr);
  }
  {
    auto ro = ctxdb::Database::open(path, R"({"read_only":true})");
    CHECK(code_of([&] { ro.append("ses_x", R"({"type":"Note","actor":"a","payload":{}})"); }) ==
          CTXDB_READONLY);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::fprintf(stderr, "header_hpp: %d failed\n", failures);
  return failures ? 1 : 0;
}
