// I/O faults, tested the way SQLite tests itself: every write operation of
// the engine runs on a database opened through FaultVfs (fault_vfs.hpp),
// which fails its Nth read, write or sync, or cuts the power there, for
// every N the operation reaches. Then the file is opened again through the
// normal VFS and must be sound (verify, rebuild --check, SQLite's
// integrity check) and hold exactly the operations that were acknowledged.
// Also: the config key "vfs" that puts a handle on a VFS.
#include "agent_events.hpp"
#include "engine.hpp"
#include "fault_vfs.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace faults_test {

using namespace ctxdb;
using namespace ctxdb::test;
using Fault = FaultVfs::Fault;
using Op = FaultVfs::Op;

namespace {

constexpr int64_t kT0 = 1700000000000;
const std::string kFaultVfs = std::string(R"("vfs":")") + FaultVfs::kName + "\"";

std::string ts(int64_t i) { return R"("ts":)" + std::to_string(kT0 + i); }

// The export stream of every session, as ctxdb_export gives it.
std::string export_stream(Engine &db) {
  Engine::ExportState state;
  std::string out;
  for (auto rows = db.export_page(state, 100); !rows.empty(); rows = db.export_page(state, 100))
    for (const std::string &row : rows) out += row + "\n";
  return out;
}

// Text of `bytes` bytes that zstd does not shrink to nothing: numbered
// lines of pseudo-random words.
std::string varied_text(size_t bytes) {
  static const char *const kWords[] = {"alpha", "bravo", "charlie", "delta",  "echo", "foxtrot",
                                       "golf",  "hotel", "india",   "juliet", "kilo", "lima"};
  std::string out;
  uint64_t x = 88172645463325252ull;
  for (int line = 0; out.size() < bytes; ++line) {
    out += std::to_string(line);
    for (int w = 0; w < 8; ++w) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      out += ' ';
      out += kWords[x % 12];
      out += std::to_string(x % 1000);
    }
    out += '\n';
  }
  out.resize(bytes);
  return out;
}

// The prior content every run starts from: session "s" with six turns (a
// compaction has something to cut), memory m1 to purge, an artifact.
struct Template {
  TempDir dir;
  std::string path = dir.file("template.ctxdb");
  Template() {
    Engine db(path, "");
    db.session_create(R"({"id":"s",)" + ts(0) + R"(,"payload":{"agent_id":"a"}})");
    for (int i = 1; i <= 6; ++i) {
      std::string k = std::to_string(i);
      db.append("s", prompt("turn " + k + ": fix module " + k,
                            R"("id":"evt_p)" + k + "\"," + ts(10 * i)));
      db.append("s", call("c" + k, ts(10 * i + 1)));
      db.append("s", event("ToolCallFinished", "tool",
                           R"({"tool_call_id":"c)" + k + R"(","name":"bash","output":")" +
                               std::string(600, char('a' + i)) + "\"}",
                           ts(10 * i + 2)));
    }
    db.memory_write("s", R"({"memory_id":"m1","scope":"project","scope_id":"p1","kind":"fact",)"
                         R"("content":"the door code is 4711-0815","source_refs":["evt_p1"],)"
                         R"("update_policy":"manual",)" +
                             ts(100) + "}");
    db.artifact_put(varied_text(5000), "");
  }
};

const Template &the_template() {
  static Template t;
  return t;
}

// What the source of the import holds: session "imp" with a tool output
// large enough to be spilled into an artifact, exported.
const std::string &import_stream() {
  static const std::string stream = [] {
    TempDir dir;
    Engine db(dir.file("source.ctxdb"), "");
    db.session_create(R"({"id":"imp",)" + ts(0) + R"(,"payload":{"agent_id":"b"}})");
    db.append("imp", prompt("list the files", ts(1)));
    db.append("imp", call("i1", ts(2)));
    db.append("imp", event("ToolCallFinished", "tool",
                           R"({"tool_call_id":"i1","name":"bash","output":")" +
                               std::string(20000, 'x') + "\"}",
                           ts(3)));
    return export_stream(db);
  }();
  return stream;
}

// What a failed call returns at the C ABI (capi's fail_current): the
// engine's Error, or SQLite's mapped by store::to_error.
Error failure_of(const std::function<void()> &call) {
  try {
    call();
  } catch (const Error &e) {
    return e;
  } catch (const SQLite::Exception &e) {
    return store::to_error(e);
  }
  return Error(Code::kOk, "");
}

bool found(const std::function<void()> &read) { return code_of(read) == Code::kOk; }

// One write operation of the engine and how to see it in the file.
struct Operation {
  const char *name;
  std::function<void(Engine &)> run;
  // Whether the operation is in the file: all of it, none of it, or (a
  // torn operation) neither.
  enum class Seen { kAll, kNone, kTorn };
  std::function<Seen(Engine &)> seen;
  // Bytes the file may not hold once the operation is in it (what a purge
  // removes), looked for after the reopened handle has closed.
  std::string erased = {};
};

Operation::Seen all_or_none(const std::vector<bool> &parts) {
  size_t n = std::count(parts.begin(), parts.end(), true);
  return n == parts.size() ? Operation::Seen::kAll
         : n == 0          ? Operation::Seen::kNone
                           : Operation::Seen::kTorn;
}

const std::string &artifact_bytes() {
  static const std::string bytes = varied_text(700 * 1024); // three chunks of 256 KiB
  return bytes;
}

std::vector<Operation> operations() {
  using Seen = Operation::Seen;
  auto event_there = [](Engine &db, const char *id) { return found([&] { db.event_get(id); }); };
  return {
      {"session create",
       [](Engine &db) { db.session_create(R"({"id":"s2","payload":{"agent_id":"a"}})"); },
       [](Engine &db) { return all_or_none({db.session_exists("s2")}); }},
      {"append",
       [](Engine &db) { db.append("s", prompt("one more thing", R"("id":"evt_fault")")); },
       [=](Engine &db) { return all_or_none({event_there(db, "evt_fault")}); }},
      {"batch append",
       [](Engine &db) {
         db.append_batch("s", prompt("batch", R"("id":"evt_b1")") + "\n" +
                                  call("cb", R"("id":"evt_b2")") + "\n" +
                                  finished("cb", R"("id":"evt_b3")") + "\n");
       },
       [=](Engine &db) {
         return all_or_none(
             {event_there(db, "evt_b1"), event_there(db, "evt_b2"), event_there(db, "evt_b3")});
       }},
      {"import", [](Engine &db) { db.import(import_stream()); },
       [](Engine &db) {
         // The template's artifact, and the spilled output's
         bool artifact = items(db.artifact_list(std::nullopt)).size() == 2;
         return all_or_none({db.session_exists("imp"), artifact});
       }},
      {"artifact put", [](Engine &db) { db.artifact_put(artifact_bytes(), R"({"name":"big"})"); },
       [](Engine &db) {
         std::string list = db.artifact_list(std::nullopt);
         return all_or_none({list.find(R"("name":"big")") != std::string::npos});
       }},
      {"streaming artifact put",
       [](Engine &db) {
         artifact::ArtifactStore::Writer w = db.artifact_writer(R"({"name":"streamed"})");
         std::string_view bytes = artifact_bytes();
         for (size_t at = 0; at < 300 * 1024; at += 100 * 1024)
           w.write(bytes.substr(at, 100 * 1024));
         db.artifact_finish(w);
       },
       [](Engine &db) {
         std::string list = db.artifact_list(std::nullopt);
         return all_or_none({list.find(R"("name":"streamed")") != std::string::npos});
       }},
      {"compaction",
       [](Engine &db) {
         std::string r = db.compact("s", R"({"keep_recent_tokens":200})", nullptr);
         REQUIRE(field(r, "status") == "compacted");
       },
       [](Engine &db) { return all_or_none({db.compactions("s", std::nullopt) != "[]"}); }},
      {"memory write",
       [](Engine &db) {
         db.memory_write("s", R"({"memory_id":"m2","scope":"project","scope_id":"p1",)"
                              R"("kind":"fact","content":"tests run with make check",)"
                              R"("source_refs":["evt_p2"],"update_policy":"manual"})");
       },
       [](Engine &db) { return all_or_none({found([&] { db.memory_get("m2"); })}); }},
      {"memory purge", [](Engine &db) { db.memory_forget("m1", R"({"mode":"purge"})"); },
       [](Engine &db) {
         bool gone = !found([&] { db.memory_get("m1"); });
         bool text_gone = export_stream(db).find("4711-0815") == std::string::npos;
         return all_or_none({gone, text_gone});
       },
       "4711-0815"},
  };
}

int64_t event_count(Engine &db) { return std::stoll(field(db.verify(std::nullopt), "events")); }

std::string file_bytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::string integrity(const std::string &path) {
  sqlite3 *db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt *q = nullptr;
  std::string result = "cannot run";
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &q, nullptr) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW)
    result = reinterpret_cast<const char *>(sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(db);
  return result;
}

// The figures of one operation under one kind of fault.
struct Tally {
  int64_t tried = 0;                 // runs whose fault happened
  int64_t acknowledged = 0;          // ... in which the operation returned OK anyway
  int64_t acked_lost = 0;            // acknowledged, then not in the file
  int64_t failed_present = 0;        // failed, yet in the file
  int64_t torn = 0;                  // partly in the file
  int64_t corrupt = 0;               // the file unsound afterwards
  int64_t leaked = 0;                // the file's bytes still hold what it erased
  std::set<std::string> problems;    // what each failed check said, once
  std::map<Code, std::string> codes; // the codes failed operations returned, a message of each
};

struct Baseline {
  FaultVfs::Counts io;
  int64_t events_before = 0, events_after = 0;
};

// A fresh copy of the template, and FaultVfs knowing no file.
struct Run {
  TempDir dir;
  std::string path = dir.file("run.ctxdb");
  Run() {
    std::filesystem::copy_file(the_template().path, path);
    FaultVfs::get().reset();
  }
};

// The operation's I/O with no fault, and the events it adds.
Baseline baseline(const Operation &op, const std::string &config) {
  Run run;
  Baseline b;
  {
    Engine db(run.path, "");
    b.events_before = event_count(db);
  }
  {
    // Opened as each run opens it, with nothing read before the operation.
    Engine db(run.path, config);
    FaultVfs::get().arm();
    op.run(db);
    b.io = FaultVfs::get().counts();
  }
  FaultVfs::get().reset();
  Engine db(run.path, "");
  b.events_after = event_count(db);
  REQUIRE(op.seen(db) == Operation::Seen::kAll);
  return b;
}

// Runs op with `fault` injected, reopens through the normal VFS and
// checks the file, adding what it found to `tally`.
// Returns what the operation returned (kOk also when the fault never came).
Code run_with_fault(const Operation &op, const std::string &config, const Baseline &b,
                    const Fault &fault, Tally &tally) {
  Run run;
  FaultVfs &vfs = FaultVfs::get();
  Code code = Code::kOk;
  std::string message;
  {
    Engine db(run.path, config);
    vfs.arm(fault);
    Error failure = failure_of([&] { op.run(db); });
    code = failure.code();
    message = failure.what();
  } // the handle closes (checkpointing the WAL): after a power cut, writing nothing
  if (!vfs.fired()) return code; // the operation did less I/O this time
  if (fault.kind == Fault::Kind::kPowerLoss)
    vfs.reboot();
  else
    vfs.reset();
  ++tally.tried;
  bool acked = code == Code::kOk;
  if (acked) ++tally.acknowledged;
  if (!acked) tally.codes.emplace(code, message);
  auto unsound = [&](const std::string &what) {
    ++tally.corrupt;
    tally.problems.insert(std::string(op.name) + ": " + what);
  };
  Operation::Seen seen = Operation::Seen::kNone;
  try {
    Engine db(run.path, "");
    if (std::string v = db.verify(std::nullopt); field(v, "ok") != "true") unsound("verify: " + v);
    if (std::string m = message_of([&] { db.rebuild(R"({"check":true})"); }); !m.empty())
      unsound("rebuild --check: " + m);
    switch (seen = op.seen(db)) {
    case Operation::Seen::kAll:
      if (!acked) {
        ++tally.failed_present;
        tally.problems.insert(std::string(op.name) + ": present after failing with " + message);
      }
      if (event_count(db) != b.events_after) unsound("events other than the operation's changed");
      break;
    case Operation::Seen::kNone:
      if (acked) {
        ++tally.acked_lost;
        tally.problems.insert(std::string(op.name) + ": acknowledged, then lost");
      }
      if (event_count(db) != b.events_before) unsound("events other than the operation's changed");
      break;
    case Operation::Seen::kTorn: ++tally.torn; break;
    }
  } catch (const std::exception &e) { // an Error, or SQLite's
    unsound(std::string("reopen: ") + e.what());
  }
  if (std::string r = integrity(run.path); r != "ok") unsound("integrity_check: " + r);
  if (!op.erased.empty() && seen == Operation::Seen::kAll &&
      file_bytes(run.path).find(op.erased) != std::string::npos) {
    ++tally.leaked;
    tally.problems.insert(std::string(op.name) + ": the file still holds " + op.erased);
  }
  return code;
}

// Which Ns of a count to try: all of them, but under AddressSanitizer (a
// run costs about three times the CPU) every other read and write, which
// keeps the sweep near a minute. Every sync is always tried: an
// operation makes two or three.
#if defined(__SANITIZE_ADDRESS__)
constexpr int64_t kStride = 2;
#else
constexpr int64_t kStride = 1;
#endif

struct Plan {
  const char *what;
  Fault::Kind kind;
  Op op;
  int error;
};

// Every N the operation reaches, then the first I/O after it returned
// (of the close: the operation acknowledged, then the fault).
Tally run_plan(const Operation &op, const std::string &config, const Baseline &b,
               const Plan &plan) {
  Tally tally;
  int64_t stride = plan.op == Op::kSync ? 1 : kStride;
  for (int64_t n = 1; n <= b.io.of(plan.op); n += stride)
    run_with_fault(op, config, b, Fault{plan.kind, plan.op, n, plan.error}, tally);
  Fault after{plan.kind, Op::kAny, b.io.of(Op::kAny) + 1, plan.error};
  // Acknowledged: the operation's I/O is what the baseline counted, so
  // the Ns above reached all of it.
  CHECK(run_with_fault(op, config, b, after, tally) == Code::kOk);
  return tally;
}

std::string describe(const char *op, const char *what, const FaultVfs::Counts &io, const Tally &t) {
  std::ostringstream out;
  out << op << " (" << io.reads << " reads, " << io.writes << " writes, " << io.syncs << " syncs), "
      << what << ": " << t.tried << " fault points tried, " << t.acknowledged << " acknowledged, "
      << t.acked_lost << " acknowledged-lost, " << t.failed_present << " failed-present, " << t.torn
      << " torn, " << t.corrupt << " corrupt, " << t.leaked << " leaked";
  return out.str();
}

} // namespace

TEST_CASE("config vfs: a registered VFS name is used, an unknown one is refused naming it") {
  TempDir dir;
  std::string path = dir.file("v.ctxdb");
  CHECK(code_of([&] { Engine db(path, R"({"vfs":"no-such-vfs"})"); }) == Code::kInvalidArg);
  CHECK(message_of([&] { Engine db(path, R"({"vfs":"no-such-vfs"})"); }).find("no-such-vfs") !=
        std::string::npos);
  CHECK(code_of([&] { Engine db(path, R"({"vfs":""})"); }) == Code::kInvalidArg);
  CHECK(!std::filesystem::exists(path)); // refused before anything was opened

  FaultVfs &vfs = FaultVfs::get();
  vfs.reset();
  vfs.arm();
  {
    Engine db(path, "{" + kFaultVfs + "}");
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
  }
  CHECK(vfs.counts().writes > 0);
  CHECK(vfs.counts().syncs > 0);
  vfs.reset();
}

TEST_CASE("config vfs: the checkpointer's and a rebuild's connections open through it too") {
  TempDir dir;
  std::string path = dir.file("v.ctxdb");
  { Engine(path, "").session_create(R"({"id":"s","payload":{"agent_id":"a"}})"); }
  FaultVfs &vfs = FaultVfs::get();
  vfs.reset();
  vfs.arm();
  std::string full = std::filesystem::canonical(path).string();
  {
    Engine db(path, "{" + kFaultVfs + R"(,"checkpoint":"background"})");
    CHECK(vfs.main_db_opens(full) == 2); // the handle's and the checkpointer's
    db.rebuild(R"({"check":true})");
    // ... and the rebuild's two readers (the checksums before, the log)
    CHECK(vfs.main_db_opens(full) == 4);
  }
  {
    Engine db(path, "{" + kFaultVfs + R"(,"checkpoint":"inline"})");
    CHECK(vfs.main_db_opens(full) == 5);
  }
  vfs.reset();
}

TEST_CASE("FaultVfs: a power cut keeps what was synced and drops the rest") {
  // The harness itself: a commit with durability full is synced and
  // survives a cut at the next write; with normal it is not, and does not.
  for (const char *durability : {"full", "normal"}) {
    INFO(durability);
    TempDir dir;
    std::string path = dir.file("p.ctxdb");
    { Engine(path, "").session_create(R"({"id":"s","payload":{"agent_id":"a"}})"); }
    FaultVfs &vfs = FaultVfs::get();
    vfs.reset();
    {
      Engine db(path,
                "{" + kFaultVfs + R"(,"checkpoint":"inline","durability":")" + durability + "\"}");
      db.append("s", prompt("kept", R"("id":"evt_kept")"));
      vfs.arm(Fault{Fault::Kind::kPowerLoss, Op::kWrite, 1, 0});
      CHECK(failure_of([&] { db.append("s", prompt("lost", R"("id":"evt_lost")")); }).code() ==
            Code::kIo);
      CHECK(vfs.fired());
    }
    vfs.reboot();
    Engine db(path, "");
    bool full = std::string(durability) == "full";
    CHECK(code_of([&] { db.event_get("evt_kept"); }) == (full ? Code::kOk : Code::kNotFound));
    CHECK(code_of([&] { db.event_get("evt_lost"); }) == Code::kNotFound);
    CHECK(field(db.verify(std::nullopt), "ok") == "true");
    CHECK(integrity(path) == "ok");
  }
}

// Durability full: an acknowledged operation must survive a power cut, and
// under an error nothing of a failed one may be in the file. (With
// durability normal, below, a power cut may lose acknowledged operations.)
TEST_CASE("I/O faults: every write operation, every fault point, durability full") {
  std::string config = "{" + kFaultVfs + R"(,"durability":"full"})";
  const Plan plans[] = {
      {"write error (IOERR_WRITE)", Fault::Kind::kError, Op::kWrite, SQLITE_IOERR_WRITE},
      {"write error (FULL)", Fault::Kind::kError, Op::kWrite, SQLITE_FULL},
      {"sync error", Fault::Kind::kError, Op::kSync, SQLITE_IOERR_FSYNC},
      {"read error", Fault::Kind::kError, Op::kRead, SQLITE_IOERR_READ},
      {"power loss at a sync", Fault::Kind::kPowerLoss, Op::kSync, 0},
      {"power loss at a write", Fault::Kind::kPowerLoss, Op::kWrite, 0},
  };
  for (const Operation &op : operations()) {
    Baseline b = baseline(op, config);
    // What the operation erases is there to find before it.
    if (!op.erased.empty())
      CHECK(file_bytes(the_template().path).find(op.erased) != std::string::npos);
    CHECK(b.io.writes > 0);
    CHECK(b.io.syncs > 0);
    for (const Plan &plan : plans) {
      Tally t = run_plan(op, config, b, plan);
      MESSAGE(describe(op.name, plan.what, b.io, t));
      INFO(op.name << ", " << plan.what);
      for (const std::string &p : t.problems) INFO(p);
      CHECK(t.tried > 0);
      CHECK(t.corrupt == 0);
      CHECK(t.leaked == 0);
      CHECK(t.torn == 0);
      CHECK(t.acked_lost == 0);
      // A power cut may come after the commit is durable and before the
      // call returns: the process would be gone, with no answer to give.
      if (plan.kind == Fault::Kind::kError) CHECK(t.failed_present == 0);
      for (const auto &[code, message] : t.codes) {
        INFO(message);
        CHECK(code == Code::kIo);
      }
      for (const std::string &p : t.problems) MESSAGE(p);
    }
  }
}

// With durability normal a commit is not synced: a power cut after it
// returned may lose it (the test counts those), but never tears an
// operation or damages the file. The checkpoint is inline, as with full:
// the background thread's I/O would make the fault points vary from run
// to run (its connection goes through the VFS as well, tested above).
TEST_CASE("I/O faults: a power cut with durability normal loses commits, never soundness") {
  std::string config = "{" + kFaultVfs + R"(,"durability":"normal","checkpoint":"inline"})";
  const Plan plan{"power loss at a write (normal)", Fault::Kind::kPowerLoss, Op::kWrite, 0};
  for (const Operation &op : operations()) {
    Baseline b = baseline(op, config);
    Tally t = run_plan(op, config, b, plan);
    MESSAGE(describe(op.name, plan.what, b.io, t));
    for (const std::string &p : t.problems) MESSAGE(p);
    CHECK(t.tried > 0);
    CHECK(t.corrupt == 0);
    CHECK(t.leaked == 0);
    CHECK(t.torn == 0);
  }
}

} // namespace faults_test
