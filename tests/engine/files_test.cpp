// The files projection: per file, the last read and write and the change
// summaries on a branch's path.
#include "agent_events.hpp"
#include "engine.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace files_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

std::string file_event(const char *type, const std::string &path, const std::string &more = "",
                       const std::string &extra = "") {
  return event(type, "host", R"({"path":")" + path + "\"" + more + "}", extra);
}

} // namespace

TEST_CASE("files: last read, last write and the changes of each file on a path") {
  TempDir dir;
  Engine db(dir.file("f.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  auto add = [&](const std::string &line) { return id_of(db.append("s", line)); };
  std::string read1 = add(file_event("FileRead", "b.py"));
  std::string read2 = add(file_event("FileRead", "b.py", R"(,"bytes":10)"));
  std::string base = add(file_event("FileRead", "a.py"));
  std::string write = add(file_event(
      "FileWritten", "b.py", R"(,"change_summary":"strip the email","artifact_id":"art_2")"));
  std::string diff = add(file_event("DiffApplied", "b.py", R"(,"diff":"@@")"));
  // A fork at a.py's read sees none of b.py's writes.
  std::string fork =
      add(file_event("FileWritten", "c.py", R"(,"change_summary":"new")", after(base)));

  std::vector<std::string> main = items(db.files("s", std::nullopt));
  REQUIRE(column(db.files("s", std::nullopt), "path") == std::vector<std::string>{"a.py", "b.py"});
  CHECK(field(main[0], "last_write") == "null");
  CHECK(field(field(main[0], "last_read"), "event_id") == base);
  const std::string &b = main[1];
  CHECK(field(field(b, "last_read"), "event_id") == read2);
  CHECK(field(field(b, "last_write"), "event_id") == diff);
  CHECK(field(field(b, "last_write"), "op") == "diff");
  CHECK(field(b, "reads") == "2");
  CHECK(field(b, "writes") == "2");
  CHECK(column(field(b, "changes"), "event_id") == std::vector<std::string>{write, diff});
  CHECK(column(field(b, "changes"), "change_summary") ==
        std::vector<std::string>{"strip the email", "null"});
  CHECK(column(field(b, "changes"), "artifact_id") == std::vector<std::string>{"art_2", "null"});

  std::string on_fork = db.files("s", std::string_view(fork));
  CHECK(column(on_fork, "path") == std::vector<std::string>{"a.py", "b.py", "c.py"});
  std::string b_on_fork = items(on_fork)[1];
  CHECK(field(b_on_fork, "last_write") == "null");
  CHECK(field(b_on_fork, "reads") == "2");
  CHECK(field(field(items(on_fork)[2], "last_write"), "branch_id") == fork);
  CHECK(read1 != read2);
}

TEST_CASE("files: a batch's rows are written together, and a rejected batch leaves none") {
  TempDir dir;
  Engine db(dir.file("f.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  // More rows than the projection holds before it writes, and a remainder
  // that fills no multi-row INSERT.
  const int n = 1100;
  std::string batch;
  for (int i = 0; i < n; ++i)
    batch += file_event(i % 2 ? "FileWritten" : "FileRead", "f" + std::to_string(i % 7) + ".py",
                        R"(,"bytes":)" + std::to_string(i)) +
             "\n";
  db.append_batch("s", batch);
  std::vector<std::string> files = items(db.files("s", std::nullopt));
  REQUIRE(files.size() == 7);
  int reads = 0, writes = 0;
  for (const std::string &f : files) {
    reads += std::stoi(field(f, "reads"));
    writes += std::stoi(field(f, "writes"));
  }
  CHECK(reads == n / 2);
  CHECK(writes == n / 2);
  std::string before = db.files("s", std::nullopt);

  // The last line is refused: the rows before it in the batch are dropped.
  std::string refused;
  for (int i = 0; i < 40; ++i) refused += file_event("FileRead", "g.py") + "\n";
  refused += R"({"type":"FileRead","actor":"host","payload":{"path":7}})";
  CHECK(code_of([&] { db.append_batch("s", refused); }) == Code::kInvalidArg);
  CHECK(db.files("s", std::nullopt) == before);
  db.append("s", file_event("FileRead", "h.py"));
  CHECK(items(db.files("s", std::nullopt)).size() == 8);
  CHECK(field(db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("files: bytes past 64 signed bits are refused by name, and nothing is written") {
  TempDir dir;
  Engine db(dir.file("f.ctxdb"), "");
  db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  std::string error = message_of([&] {
    db.append("s", file_event("FileWritten", "a.py", R"(,"bytes":18446744073709551615)"));
  });
  CHECK(error.find("payload.bytes' must be an integer, not an integer past 64 signed bits") !=
        std::string::npos);
  CHECK(db.files("s", std::nullopt) == "[]");
}

} // namespace files_test
