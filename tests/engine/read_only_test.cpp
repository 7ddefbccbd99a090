// A file on storage this process cannot write opens read-only, every read
// works, a write says why it cannot, and what cannot be opened says why.
// Root ignores file modes, so the checks run in a child process as an
// unprivileged user (uid 65534) when the suite runs as root.
#include "engine.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

namespace read_only_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

// What fn returns, run in a child process without root's privileges.
std::string unprivileged(const std::function<std::string()> &fn) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    std::string out;
    if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
      out = "cannot drop root";
    else
      try {
        out = fn();
      } catch (const std::exception &e) {
        out = std::string("threw: ") + e.what();
      }
    ssize_t written = write(fds[1], out.data(), out.size());
    _exit(written == ssize_t(out.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  return out;
}

// A scratch folder the unprivileged user can reach, with a folder `ro`
// it cannot write.
struct ReadOnlyDir {
  TempDir tmp;
  std::string dir = tmp.file("ro");
  ReadOnlyDir() {
    std::filesystem::permissions(tmp.file(""), std::filesystem::perms(0755));
    std::filesystem::create_directory(dir);
  }
  std::string file(const std::string &name) const { return dir + "/" + name; }
  // The files given, made read-only, and the folder closed to writes.
  void seal() {
    for (const auto &entry : std::filesystem::directory_iterator(dir))
      std::filesystem::permissions(entry.path(), std::filesystem::perms(0444));
    std::filesystem::permissions(dir, std::filesystem::perms(0555));
  }
  ~ReadOnlyDir() { std::filesystem::permissions(dir, std::filesystem::perms(0755)); }
};

// "ok", or the code fn() threw (its number) and its message.
std::string code_and_message(const std::function<void()> &fn) {
  try {
    fn();
    return "ok";
  } catch (const Error &e) {
    return std::to_string(int(e.code())) + ": " + e.what();
  }
}

const std::string kIo = std::to_string(int(Code::kIo));
const std::string kReadOnly = std::to_string(int(Code::kReadOnly));

bool has(const std::string &text, const std::string &part) {
  INFO(text);
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("read-only storage: a file that cannot be written opens read-only and reads") {
  ReadOnlyDir ro;
  std::string path = ro.file("a.ctxdb"), artifact;
  {
    Engine db(path, "");
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
    db.append("s", R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"find )"
                   R"(the walrus"}})");
    artifact = field(db.artifact_put("line one\nline two\n", "{}"), "id");
  }
  REQUIRE(!std::filesystem::exists(path + "-wal")); // the last close checkpointed it
  ro.seal();
  std::string seen = unprivileged([&] {
    Engine db(path, ""); // no read_only: it falls back
    std::string out = field(db.verify(std::nullopt), "ok") + "|";
    out += field(db.session_get("s"), "id") + "|";
    out += std::to_string(export_all(db).size() > 0) + "|";
    out += field(db.search("walrus", ""), "hits").find("walrus") != std::string::npos ? "found|"
                                                                                      : "missed|";
    out += db.artifact_read(artifact, 0, -1) + "|";
    out += std::to_string(db.compile(R"({"session_id":"s","max_tokens":8000})").size() > 0) + "|";
    out += code_and_message([&] {
      db.append("s", R"({"type":"UserPromptSubmitted","actor":"u","payload":{"text":"x"}})");
    });
    return out;
  });
  INFO(seen);
  CHECK(has(seen, "true|s|1|found|line one\nline two\n|1|"));
  CHECK(has(seen, kReadOnly + ": the database '" + path +
                      "' was opened read-only: the file is not writable"));
  // Nothing was written beside it.
  CHECK(!std::filesystem::exists(path + "-wal"));
  CHECK(!std::filesystem::exists(path + "-shm"));
}

TEST_CASE("read-only storage: what cannot be opened says why") {
  ReadOnlyDir ro;
  std::string path = ro.file("a.ctxdb");
  CHECK(has(code_and_message([&] { Engine db(path, R"({"read_only":true})"); }),
            kIo + ": cannot open '" + path + "' read-only: there is no such file"));
  std::string nowhere = ro.file("no/such/dir/x.ctxdb");
  CHECK(has(code_and_message([&] { Engine db(nowhere, ""); }),
            kIo + ": cannot create '" + nowhere + "': its directory '" + ro.file("no/such/dir") +
                "' does not exist"));
  // A WAL holding commits, with no -shm index beside it, in a folder
  // where SQLite cannot create one.
  TempDir src;
  std::string live = src.file("a.ctxdb");
  Engine writer(live, R"({"checkpoint":"inline"})");
  writer.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  std::filesystem::copy_file(live, path);
  std::filesystem::copy_file(live + "-wal", path + "-wal");
  std::string no_file = ro.file("b.ctxdb");
  ro.seal();
  std::string seen = unprivileged([&] {
    return code_and_message([&] { Engine db(path, R"({"read_only":true})"); }) + "\n" +
           code_and_message([&] { Engine db(no_file, ""); });
  });
  INFO(seen);
  CHECK(has(seen, kReadOnly + ": cannot open '" + path + "' read-only: its WAL ('" + path +
                      "-wal') holds commits not yet copied into the file"));
  CHECK(has(seen, "its directory '" + ro.dir + "' is not writable"));
  CHECK(has(seen, kReadOnly + ": cannot create '" + no_file + "': its directory '" + ro.dir +
                      "' is not writable"));
}

} // namespace read_only_test
