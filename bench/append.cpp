// append.cpp — append throughput of ctxdb against a raw-SQLite floor.
//
// For each scenario (one event per transaction with durability "normal" and
// "full"; NDJSON batches of 100 and 1000 events) it appends the same
// realistic ~1 KB agent events through the C ABI and, as a baseline, inserts
// the same rows into a plain SQLite table shaped like ctxdb's `events`
// (WAL, same synchronous level, cached prepared statement, precomputed hash
// bytes, no JSON work). The baseline is the floor: what storing those bytes
// costs before validation, hashing and projections. It opens its file with
// the settings ctxdb's Store sets (page cache and memory map size), so the
// ratio measures the engine's work and not a difference of PRAGMAs: in
// rounds this short, SQLite's default 2 MiB page cache made the raw side
// ~13% faster than ctxdb's 16 MiB (and the log alone ~15%), since a small
// cache reuses its page buffers while they are still in the CPU's caches.
//
// Both sides also checkpoint the WAL the same way: by default on a thread
// of their own, with ctxdb's checkpointer (store/checkpointer.hpp); with
// --checkpoint inline, inside the commit that fills the WAL, as SQLite
// does by itself. Checkpointing inline, a checkpoint's two fsyncs were
// about a third of every side's round (strace: ~3.4 ms each, 14 per 6,000
// events), which hid the engine's own work behind the VM's disk.
//
// A third side is the log alone: the engine's EventLog (validation, ids,
// the hash chain, the events table and the session tree) with no
// projection observing it, driven through the engine's C++ API. One goal
// is about it; the other is about ctxdb whole, every projection on.
//
// Rounds alternate ctxdb and raw (and which of the two goes first), each on a
// fresh file, so drifting machine noise hits both sides; the process keeps
// the memory a round frees (keep_freed_memory), so no round inherits page
// faults from the one before it. The report gives medians and the ratio of
// the medians.
//
// Exit status: 0 on success, 1 on any ctxdb or SQLite error (the message is
// printed), 2 on a bad command line.

#include "log/event_log.hpp"
#include "store/store.hpp"

#include <ctxdb/ctxdb.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif
#ifdef __GLIBC__
#include <malloc.h>
#endif

#ifndef CTXDB_BENCH_BUILD_TYPE
#define CTXDB_BENCH_BUILD_TYPE ""
#endif

namespace fs = std::filesystem;

namespace {

// Any failure ends the run: a benchmark that skips errors measures nothing.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void fail_ctxdb(const char *call, int rc, const ctxdb_db *db) {
  const char *msg = ctxdb_errmsg(db);
  throw BenchError(std::string(call) + " failed: " + ctxdb_errstr(rc) + ": " +
                   (msg ? msg : "(no message)"));
}

[[noreturn]] void fail_sqlite(const char *what, sqlite3 *db) {
  throw BenchError(std::string("raw sqlite: ") + what + ": " +
                   (db ? sqlite3_errmsg(db) : "(no handle)"));
}

// ---- the workload ----------------------------------------------------------

enum class Durability { Normal, Full };

const char *durability_name(Durability d) { return d == Durability::Full ? "full" : "normal"; }

// One event as the host writes it, plus the columns the raw baseline stores.
struct Event {
  std::string line; // the JSON the host hands to ctxdb (no newline)
  std::string type; // columns of the baseline row ...
  std::string actor;
  std::string payload; // ... the payload object's JSON text
};

void append_json_escaped(std::string &out, std::string_view s) {
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
  }
}

// Generates an agent session: a user prompt, then tool-using assistant turns
// whose calls each get a result, then a closing answer. Every result follows
// the assistant message that made its call, as the engine requires. Sizes are
// drawn so that each event line is about 1 KB, as the issue specifies; tool
// output is log text with quotes, tabs and some non-ASCII, so the JSON path
// does real escaping and UTF-8 work. Seeded, so every run sees the same data.
class SessionGenerator {
public:
  std::vector<Event> generate(size_t count) {
    std::vector<Event> events;
    events.reserve(count);
    while (events.size() < count) {
      // The turn shape: prompt, 3 × (call, result), answer: 8 events.
      events.push_back(user_prompt());
      for (int k = 0; k < 3 && events.size() < count; ++k) {
        std::string call_id = "call_" + std::to_string(++call_counter_);
        events.push_back(assistant_tool_call(call_id));
        if (events.size() < count) events.push_back(tool_result(call_id));
      }
      if (events.size() < count) events.push_back(assistant_answer());
    }
    return events;
  }

private:
  // The event line length to aim at; fill() stops after the sentence or log
  // line that crosses it, so lines land a little above.
  size_t target_size() { return std::uniform_int_distribution<size_t>(880, 1100)(rng_); }

  template <size_t N> const char *pick(const std::array<const char *, N> &options) {
    return options[std::uniform_int_distribution<size_t>(0, N - 1)(rng_)];
  }
  int number(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  // Appends escaped text to `out` until the event line reaches `target`
  // bytes; `fixed_len` is the length of the rest of that line.
  void fill(std::string &out, size_t fixed_len, size_t target, bool log_lines) {
    size_t start = out.size();
    while (fixed_len + (out.size() - start) < target) {
      append_json_escaped(out, log_lines ? log_line() : sentence());
    }
  }

  std::string log_line() {
    static constexpr std::array<const char *, 6> kFiles = {"engine/log/event_log.cpp",
                                                           "engine/project/tool_calls.cpp",
                                                           "engine/compile/fit.cpp",
                                                           "capi/ctxdb.cpp",
                                                           "src/parser.ts",
                                                           "tests/engine/log/append_test.cpp"};
    char buf[200];
    switch (number(0, 5)) {
    case 0:
      std::snprintf(buf, sizeof buf, "[%3d%%] Building CXX object %s.o\n", number(0, 100),
                    pick(kFiles));
      break;
    case 1:
      std::snprintf(buf, sizeof buf,
                    "%s:%d:%d: warning: unused variable 'tmp%d' [-Wunused-variable]\n",
                    pick(kFiles), number(1, 900), number(1, 80), number(0, 9));
      break;
    case 2:
      std::snprintf(buf, sizeof buf,
                    "2024-06-01T12:%02d:%02d.%03dZ INFO\tworker-%d: fetched %d "
                    "rows in %d ms\n",
                    number(0, 59), number(0, 59), number(0, 999), number(1, 8), number(1, 5000),
                    number(1, 900));
      break;
    case 3:
      std::snprintf(buf, sizeof buf, "test_session_tree.py::test_fork_%d PASSED [%3d%%]\n",
                    number(1, 300), number(0, 100));
      break;
    case 4:
      std::snprintf(buf, sizeof buf, "  \xE2\x9C\x93 append keeps the chain intact (%d ms)\n",
                    number(1, 40));
      break;
    default:
      std::snprintf(buf, sizeof buf, "error: expected ';' after expression at \"%s\" line %d\n",
                    pick(kFiles), number(1, 900));
    }
    return buf;
  }

  std::string sentence() {
    static constexpr std::array<const char *, 8> kSentences = {
        "Please fix the failing test in engine/log and keep the hash chain "
        "verifiable after an import. ",
        "The build on CI fails with a linker error about a missing symbol; "
        "find out why and patch it. ",
        "Do not change the public header, it is part of the ABI and other "
        "teams depend on it. ",
        "I will run the test suite first to see which cases fail before "
        "touching the code. ",
        "The parser rejects lines longer than 64 KiB; that limit comes from an "
        "old buffer size. ",
        "Next, I'll read the projector for tool calls to check how pending "
        "calls are tracked. ",
        "Summary: the fork test failed because the branch leaf was not updated "
        "in the same transaction. ",
        "Could you also add a regression test and explain the change in the "
        "commit message? "};
    return pick(kSentences);
  }

  Event make(const char *type, const char *actor, std::string payload) {
    Event e;
    e.type = type;
    e.actor = actor;
    e.line = std::string(R"({"type":")") + type + R"(","actor":")" + actor + R"(","payload":)" +
             payload + "}";
    e.payload = std::move(payload);
    return e;
  }

  // Length of the event line's envelope around a payload.
  static size_t envelope(const char *type, const char *actor) {
    return std::string_view(R"({"type":"","actor":"","payload":})").size() +
           std::string_view(type).size() + std::string_view(actor).size();
  }

  Event user_prompt() {
    std::string p = R"({"text":")";
    const std::string_view tail = R"("})";
    fill(p, envelope("UserPromptSubmitted", "user") + p.size() + tail.size(), target_size(), false);
    p += tail;
    return make("UserPromptSubmitted", "user", std::move(p));
  }

  Event assistant_tool_call(const std::string &call_id) {
    static constexpr std::array<const char *, 4> kCommands = {
        "ctest --test-dir build -R log -j4 --output-on-failure", "cmake --build build -j2",
        "grep -rn \\\"prev_hash\\\" engine/", "git diff --stat HEAD~1"};
    std::string p = R"({"content":[{"type":"text","text":")";
    std::string tail = R"("},{"type":"tool_call","id":")" + call_id +
                       R"(","name":"bash","args":{"command":")" + pick(kCommands) +
                       R"("}}],"model":"gpt-4o-2024-08-06","usage":{"input_tokens":)" +
                       std::to_string(number(2000, 90000)) + R"(,"output_tokens":)" +
                       std::to_string(number(20, 800)) + "}}";
    fill(p, envelope("AssistantMessageCreated", "assistant") + p.size() + tail.size(),
         target_size(), false);
    p += tail;
    return make("AssistantMessageCreated", "assistant", std::move(p));
  }

  Event tool_result(const std::string &call_id) {
    std::string p = R"({"tool_call_id":")" + call_id + R"(","output":")";
    const std::string_view tail = R"("})";
    fill(p, envelope("ToolCallFinished", "tool") + p.size() + tail.size(), target_size(), true);
    p += tail;
    return make("ToolCallFinished", "tool", std::move(p));
  }

  Event assistant_answer() {
    std::string p = R"({"content":[{"type":"text","text":")";
    const std::string_view tail = R"("}],"model":"gpt-4o-2024-08-06"})";
    fill(p, envelope("AssistantMessageCreated", "assistant") + p.size() + tail.size(),
         target_size(), false);
    p += tail;
    return make("AssistantMessageCreated", "assistant", std::move(p));
  }

  std::mt19937_64 rng_{20240601};
  uint64_t call_counter_ = 0;
};

// ---- scenarios and results -------------------------------------------------

struct Scenario {
  std::string name;  // machine name, also what --only takes
  std::string label; // for the table
  Durability durability;
  // ctxdb's config "checkpoint" (--checkpoint), or empty for its default;
  // the raw side checkpoints as ctxdb then does.
  std::string checkpoint;
  size_t batch;  // 1: ctxdb_append per event; more: ctxdb_append_batch
  size_t events; // per round, a multiple of batch
};

struct Samples {
  // Events per second, one per round: ctxdb, the plain-table floor, and the
  // same table with the two unique indexes ctxdb keeps (id; session, seq),
  // which tells storage cost apart from the engine's own work.
  std::vector<double> ctxdb_eps, raw_eps, raw_indexed_eps;
  // The log alone (LogRunner).
  std::vector<double> log_eps;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Removes a database file and its WAL companions, so rounds do not pile up
// on disk and every round starts from an empty file.
void remove_db_files(const fs::path &file) {
  for (const char *suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ec;
    fs::remove(file.string() + suffix, ec);
  }
}

// The raw JSON token after "key": in `json` (a string's contents without
// quotes). The outputs read here are small and their keys distinctive, so a
// search is enough; the bench must not depend on a JSON library ctxdb uses.
std::string_view json_field(std::string_view json, std::string_view key) {
  std::string quoted = "\"" + std::string(key) + "\"";
  size_t pos = json.find(quoted);
  if (pos == std::string_view::npos) return {};
  pos = json.find_first_not_of(" \t\r\n", pos + quoted.size());
  if (pos == std::string_view::npos || json[pos] != ':') return {};
  pos = json.find_first_not_of(" \t\r\n", pos + 1);
  if (pos == std::string_view::npos) return {};
  if (json[pos] == '"') {
    size_t end = json.find('"', pos + 1);
    return end == std::string_view::npos ? std::string_view{} : json.substr(pos + 1, end - pos - 1);
  }
  size_t end = json.find_first_of(",}] \t\r\n", pos);
  return json.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

// ---- ctxdb side ------------------------------------------------------------

// ctxdb_open's config for a scenario.
std::string engine_config(const Scenario &sc) {
  std::string config = std::string(R"({"durability":")") + durability_name(sc.durability) + "\"";
  if (!sc.checkpoint.empty()) config += R"(,"checkpoint":")" + sc.checkpoint + "\"";
  return config + "}";
}

// Whether ctxdb checkpoints on a thread of its own in this scenario.
bool background_checkpoint(const Scenario &sc) {
  return ctxdb::store::parse_config(engine_config(sc)).background_checkpoint;
}

// Owns a buffer returned by ctxdb.
struct CtxdbBuffer {
  char *p = nullptr;
  size_t len = 0;
  CtxdbBuffer() = default;
  CtxdbBuffer(const CtxdbBuffer &) = delete;
  CtxdbBuffer &operator=(const CtxdbBuffer &) = delete;
  ~CtxdbBuffer() { ctxdb_free(p); }
  std::string_view view() const { return p ? std::string_view(p, len) : std::string_view{}; }
};

class CtxdbRunner {
public:
  explicit CtxdbRunner(const fs::path &file, const Scenario &sc) {
    std::string config = engine_config(sc);
    int rc = ctxdb_open(file.c_str(), config.data(), config.size(), &db_);
    if (rc != CTXDB_OK) fail_ctxdb("ctxdb_open", rc, nullptr);

    static constexpr std::string_view kSession =
        R"({"actor":"host","payload":{"agent_id":"bench-agent"}})";
    CtxdbBuffer out;
    rc = ctxdb_session_create(db_, kSession.data(), kSession.size(), &out.p, &out.len);
    if (rc != CTXDB_OK) fail_ctxdb("ctxdb_session_create", rc, db_);
    // "id" is the session object's first field, so the first match is it.
    session_id_ = std::string(json_field(out.view(), "id"));
    if (session_id_.empty())
      throw BenchError("ctxdb_session_create: no id in " + std::string(out.view()));
  }
  CtxdbRunner(const CtxdbRunner &) = delete;
  CtxdbRunner &operator=(const CtxdbRunner &) = delete;
  ~CtxdbRunner() { close(); }
  // Closing checkpoints the WAL into the database file: work the appends
  // caused, so rounds time it (a larger WAL must not look free).
  void close() {
    ctxdb_close(db_);
    db_ = nullptr;
  }

  // Each call is timed as a whole by the caller, including ctxdb_free of the
  // returned JSON: a host pays for that result too.
  void append(const std::string &line) {
    CtxdbBuffer out;
    int rc = ctxdb_append(db_, session_id_.data(), session_id_.size(), line.data(), line.size(),
                          &out.p, &out.len);
    if (rc != CTXDB_OK) fail_ctxdb("ctxdb_append", rc, db_);
  }

  void append_batch(const std::string &ndjson) {
    CtxdbBuffer out;
    int rc = ctxdb_append_batch(db_, session_id_.data(), session_id_.size(), ndjson.data(),
                                ndjson.size(), &out.p, &out.len);
    if (rc != CTXDB_OK) fail_ctxdb("ctxdb_append_batch", rc, db_);
  }

  // After a round, untimed: the session holds every appended event and its
  // hash chain verifies, so the speed measured is that of correct appends.
  void check(size_t appended) {
    CtxdbBuffer session;
    int rc =
        ctxdb_session_get(db_, session_id_.data(), session_id_.size(), &session.p, &session.len);
    if (rc != CTXDB_OK) fail_ctxdb("ctxdb_session_get", rc, db_);
    // Whether SessionStarted counts is the engine's business; allow both.
    size_t count =
        std::strtoull(std::string(json_field(session.view(), "event_count")).c_str(), nullptr, 10);
    if (count != appended && count != appended + 1) {
      throw BenchError("ctxdb session holds " + std::to_string(count) + " events after appending " +
                       std::to_string(appended) + ": " + std::string(session.view()));
    }
    CtxdbBuffer report;
    rc = ctxdb_verify(db_, session_id_.data(), session_id_.size(), &report.p, &report.len);
    if (rc != CTXDB_OK) fail_ctxdb("ctxdb_verify", rc, db_);
    if (json_field(report.view(), "ok") != "true") {
      throw BenchError("ctxdb_verify reports a broken chain: " + std::string(report.view()));
    }
  }

private:
  ctxdb_db *db_ = nullptr;
  std::string session_id_;
};

// ---- the log alone -----------------------------------------------------------

// The engine's event log with no observers: what an append costs before
// any projection (DESIGN §4: parse, schema checks, canonical payload, ids,
// seq, both SHA-256s, the tree, the events row). Same file settings as
// ctxdb_open, since it is the same Store.
class LogRunner {
public:
  explicit LogRunner(const fs::path &file, const Scenario &sc) {
    std::string config = engine_config(sc);
    store_.emplace(file.string(), ctxdb::store::parse_config(config));
    log_.emplace(*store_);
    log_->create_session(R"({"id":"ses_bench","payload":{"agent_id":"bench-agent"}})");
  }
  // Closing checkpoints the WAL, as ctxdb_close does: rounds time it.
  void close() {
    log_.reset();
    store_.reset();
  }
  void append(const std::string &line) { log_->append(kSession, line); }
  void append_batch(const std::string &ndjson) { log_->append_batch(kSession, ndjson); }
  // Untimed: every event is there and the chain verifies.
  void check(size_t appended) {
    ctxdb::log::VerifyReport r = log_->verify(kSession);
    if (!r.ok) throw BenchError("log-only chain broken: " + r.problem);
    if (r.events != int64_t(appended) + 1)
      throw BenchError("log-only session holds " + std::to_string(r.events) + " events after " +
                       std::to_string(appended) + " appends");
  }

private:
  static constexpr std::string_view kSession = "ses_bench";
  std::optional<ctxdb::store::Store> store_;
  std::optional<ctxdb::log::EventLog> log_;
};

// ---- raw SQLite baseline ---------------------------------------------------

class RawRunner {
public:
  RawRunner(const fs::path &file, const Scenario &sc, bool indexed) {
    const Durability durability = sc.durability;
    if (sqlite3_open(file.c_str(), &db_) != SQLITE_OK) fail_sqlite("open", db_);
    exec("PRAGMA journal_mode=WAL");
    // ctxdb's default busy timeout: the checkpointer's connection holds
    // SQLite's WAL locks for moments, and a writer without a busy handler
    // would fail where ctxdb's waits.
    sqlite3_busy_timeout(db_, ctxdb::store::Config{}.busy_timeout_ms);
    exec(durability == Durability::Full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    // The page cache, memory map and secure_delete ctxdb's Store sets on
    // every connection.
    exec(("PRAGMA cache_size=" + std::to_string(ctxdb::store::kCacheSizePragma)).c_str());
    exec(("PRAGMA mmap_size=" + std::to_string(ctxdb::store::kMmapSizePragma)).c_str());
    exec("PRAGMA secure_delete=ON");
    // ctxdb's events columns; rowid key, no other index: the floor. The
    // indexed variant adds ctxdb's two unique indexes.
    exec(indexed ? "CREATE TABLE events(id TEXT UNIQUE, session_id TEXT, seq INTEGER, "
                   "ts INTEGER, type TEXT, actor TEXT, payload TEXT, payload_hash BLOB, "
                   "prev_hash BLOB, hash BLOB, UNIQUE(session_id, seq))"
                 : "CREATE TABLE events(id TEXT, session_id TEXT, seq INTEGER, ts "
                   "INTEGER, type TEXT, actor TEXT, "
                   "payload TEXT, payload_hash BLOB, prev_hash BLOB, hash BLOB)");
    begin_ = prepare("BEGIN IMMEDIATE");
    commit_ = prepare("COMMIT");
    insert_ = prepare("INSERT INTO events VALUES(?,?,?,?,?,?,?,?,?,?)");
    // The engine's own checkpointer, so that both sides copy the WAL into
    // the file the same way and the ratio stays the engine's work.
    if (background_checkpoint(sc)) {
      checkpointer_ = ctxdb::store::Checkpointer::start(db_, file.string());
      if (!checkpointer_) fail_sqlite("cannot start the checkpointer", db_);
    }
  }
  RawRunner(const RawRunner &) = delete;
  RawRunner &operator=(const RawRunner &) = delete;
  ~RawRunner() { close(); }
  void close() {
    checkpointer_.reset(); // before its writer's connection closes
    sqlite3_finalize(begin_);
    sqlite3_finalize(commit_);
    sqlite3_finalize(insert_);
    begin_ = commit_ = insert_ = nullptr;
    sqlite3_close(db_);
    db_ = nullptr;
  }

  // Inserts events [first, first + n) in one transaction.
  void insert(const std::vector<Event> &events, size_t first, size_t n) {
    step(begin_);
    for (size_t i = first; i < first + n; ++i) {
      const Event &e = events[i];
      // Ids and timestamps are made here, as the engine makes its own;
      // formatting 30 bytes is noise next to an insert.
      char id[32];
      std::snprintf(id, sizeof id, "evt_%026zu", i);
      sqlite3_bind_text(insert_, 1, id, -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(insert_, 2, kSessionId, -1, SQLITE_STATIC);
      sqlite3_bind_int64(insert_, 3, static_cast<sqlite3_int64>(i + 1));
      sqlite3_bind_int64(insert_, 4, kBaseTs + static_cast<sqlite3_int64>(i));
      sqlite3_bind_text(insert_, 5, e.type.data(), static_cast<int>(e.type.size()), SQLITE_STATIC);
      sqlite3_bind_text(insert_, 6, e.actor.data(), static_cast<int>(e.actor.size()),
                        SQLITE_STATIC);
      sqlite3_bind_text(insert_, 7, e.payload.data(), static_cast<int>(e.payload.size()),
                        SQLITE_STATIC);
      sqlite3_bind_blob(insert_, 8, kHash.data(), kHash.size(), SQLITE_STATIC);
      sqlite3_bind_blob(insert_, 9, kHash.data(), kHash.size(), SQLITE_STATIC);
      sqlite3_bind_blob(insert_, 10, kHash.data(), kHash.size(), SQLITE_STATIC);
      step(insert_);
    }
    step(commit_);
  }

  void check(size_t appended) {
    sqlite3_stmt *count = prepare("SELECT count(*) FROM events");
    size_t rows =
        sqlite3_step(count) == SQLITE_ROW ? static_cast<size_t>(sqlite3_column_int64(count, 0)) : 0;
    sqlite3_finalize(count);
    if (rows != appended)
      throw BenchError("raw sqlite holds " + std::to_string(rows) + " rows, expected " +
                       std::to_string(appended));
  }

private:
  static constexpr const char *kSessionId = "ses_01J0BENCH0000000000000000";
  static constexpr sqlite3_int64 kBaseTs = 1717243200000; // 2024-06-01, ms
  // The floor does no hashing: every hash column holds these 32 bytes.
  static constexpr std::array<unsigned char, 32> kHash = {
      0x5e, 0x88, 0x48, 0x98, 0xda, 0x28, 0x04, 0x71, 0x51, 0xd0, 0xe5,
      0x6f, 0x8d, 0xc6, 0x29, 0x27, 0x73, 0x60, 0x3d, 0x0d, 0x6a, 0xab,
      0xbd, 0xd6, 0x2a, 0x11, 0xef, 0x72, 0x1d, 0x15, 0x42, 0xd8};

  void exec(const char *sql) {
    if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail_sqlite(sql, db_);
  }
  sqlite3_stmt *prepare(const char *sql) {
    sqlite3_stmt *s = nullptr;
    if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK)
      fail_sqlite(sql, db_);
    return s;
  }
  void step(sqlite3_stmt *s) {
    if (sqlite3_step(s) != SQLITE_DONE) fail_sqlite(sqlite3_sql(s), db_);
    sqlite3_reset(s);
  }

  sqlite3 *db_ = nullptr;
  sqlite3_stmt *begin_ = nullptr, *commit_ = nullptr, *insert_ = nullptr;
  std::unique_ptr<ctxdb::store::Checkpointer> checkpointer_;
};

// ---- running ---------------------------------------------------------------

// Events per second for one round of ctxdb (CtxdbRunner) or of the log
// alone (LogRunner) on a fresh file.
template <class Runner>
double engine_round(const fs::path &file, const Scenario &sc, const std::vector<Event> &events,
                    const std::vector<std::string> &batches) {
  remove_db_files(file);
  double eps;
  {
    Runner db(file, sc); // open and session: not timed
    auto t0 = Clock::now();
    if (sc.batch == 1) {
      for (size_t i = 0; i < sc.events; ++i) db.append(events[i].line);
    } else {
      for (const std::string &ndjson : batches) db.append_batch(ndjson);
    }
    double appending = seconds_since(t0);
    db.check(sc.events);
    auto t1 = Clock::now();
    db.close();
    eps = static_cast<double>(sc.events) / (appending + seconds_since(t1));
  }
  remove_db_files(file);
  return eps;
}

double raw_round(const fs::path &file, const Scenario &sc, const std::vector<Event> &events,
                 bool indexed) {
  remove_db_files(file);
  double eps;
  {
    RawRunner db(file, sc, indexed);
    auto t0 = Clock::now();
    for (size_t i = 0; i < sc.events; i += sc.batch) db.insert(events, i, sc.batch);
    double appending = seconds_since(t0);
    db.check(sc.events);
    auto t1 = Clock::now();
    db.close();
    eps = static_cast<double>(sc.events) / (appending + seconds_since(t1));
  }
  remove_db_files(file);
  return eps;
}

Samples run_scenario(const Scenario &sc, const std::vector<Event> &events, int rounds,
                     const fs::path &dir) {
  // NDJSON is built before timing: a host has its lines ready too.
  std::vector<std::string> batches;
  if (sc.batch > 1) {
    for (size_t i = 0; i < sc.events; i += sc.batch) {
      std::string ndjson;
      for (size_t j = i; j < i + sc.batch; ++j) (ndjson += events[j].line) += '\n';
      batches.push_back(std::move(ndjson));
    }
  }
  const fs::path ctxdb_file = dir / (sc.name + ".ctxdb");
  const fs::path raw_file = dir / (sc.name + ".raw.sqlite");
  // Progress only on a terminal: in a log it would be noise.
  const bool progress = isatty(STDERR_FILENO);
  Samples s;
  for (int r = 0; r < rounds; ++r) {
    if (progress) {
      std::fprintf(stderr, "\r%-18s round %d/%d", sc.name.c_str(), r + 1, rounds);
      std::fflush(stderr);
    }
    // Rotate who goes first, so no side always gets the warmer cache.
    for (int k = 0; k < 4; ++k) {
      switch ((r + k) % 4) {
      case 0:
        s.ctxdb_eps.push_back(engine_round<CtxdbRunner>(ctxdb_file, sc, events, batches));
        break;
      case 1: s.raw_eps.push_back(raw_round(raw_file, sc, events, false)); break;
      case 2: s.raw_indexed_eps.push_back(raw_round(raw_file, sc, events, true)); break;
      case 3: s.log_eps.push_back(engine_round<LogRunner>(ctxdb_file, sc, events, batches)); break;
      }
    }
  }
  if (progress) std::fprintf(stderr, "\r%-40s\r", "");
  return s;
}

// ---- reporting -------------------------------------------------------------

std::string with_commas(double v) {
  std::string digits = std::to_string(static_cast<long long>(v + 0.5));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string filesystem_note(const fs::path &dir) {
#ifdef __linux__
  struct statfs st {};
  if (statfs(dir.c_str(), &st) == 0 && st.f_type == 0x01021994 /* TMPFS_MAGIC */) {
    return " (tmpfs: fsync is free, so \"full\" figures mean little; use --dir "
           "on a disk)";
  }
#else
  (void)dir;
#endif
  return "";
}

// A temp dir removed when the run ends, also on error.
class TempDir {
public:
  explicit TempDir(const fs::path &parent) {
    std::string tmpl = (parent / "ctxdb-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw BenchError("cannot create a temp dir under " + parent.string());
    path_ = tmpl;
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

struct Options {
  size_t events = 6000;   // per round, normal-durability scenarios
  size_t full_events = 0; // per round, single/full; 0: events / 20
  int rounds = 7;
  fs::path dir; // parent of the temp dir; empty: the system's
  std::vector<std::string> only;
  std::string checkpoint; // empty: ctxdb's default
};

void usage(FILE *to) {
  std::fprintf(to, "usage: bench_append [--quick] [--events N] [--full-events N] "
                   "[--rounds R]\n"
                   "                    [--dir PATH] [--only NAME[,NAME...]]\n"
                   "                    [--checkpoint background|inline]\n"
                   "  --quick          a seconds-long smoke run (600 events, 3 rounds)\n"
                   "  --events N       events per round for the normal-durability "
                   "scenarios (default 6000)\n"
                   "  --full-events N  events per round for single/full (default "
                   "events/20)\n"
                   "  --rounds R       rounds per scenario, ctxdb and raw alternating "
                   "(default 7)\n"
                   "  --dir PATH       where to create the temp dir (default: the "
                   "system temp dir)\n"
                   "  --only NAMES     run only these of: single_normal single_full "
                   "batch100_normal\n"
                   "                   batch1000_normal (e.g. to profile one)\n"
                   "  --checkpoint M   how every side checkpoints the WAL: background\n"
                   "                   (default, ctxdb's checkpointer thread) or inline\n"
                   "                   (inside the commit, SQLite's automatic checkpoint)\n");
}

size_t parse_count(const char *flag, const char *value) {
  char *end = nullptr;
  unsigned long long v = value ? std::strtoull(value, &end, 10) : 0;
  if (!value || *end || v == 0) {
    std::fprintf(stderr, "bench_append: %s needs a positive integer\n", flag);
    std::exit(2);
  }
  return static_cast<size_t>(v);
}

Options parse_args(int argc, char **argv) {
  Options o;
  bool quick = false, events_given = false, rounds_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--quick") {
      quick = true;
    } else if (a == "--events") {
      o.events = parse_count("--events", next);
      events_given = true;
      ++i;
    } else if (a == "--full-events") {
      o.full_events = parse_count("--full-events", next);
      ++i;
    } else if (a == "--rounds") {
      o.rounds = static_cast<int>(parse_count("--rounds", next));
      rounds_given = true;
      ++i;
    } else if (a == "--dir" && next) {
      o.dir = next;
      ++i;
    } else if (a == "--checkpoint" && next &&
               (std::string_view(next) == "background" || std::string_view(next) == "inline")) {
      o.checkpoint = next;
      ++i;
    } else if (a == "--only" && next) {
      std::string_view list = next;
      ++i;
      while (!list.empty()) {
        size_t comma = list.find(',');
        o.only.emplace_back(list.substr(0, comma));
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
      }
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      std::exit(0);
    } else {
      usage(stderr);
      std::exit(2);
    }
  }
  // --quick sets small defaults; explicit --events/--rounds still win.
  if (quick && !events_given) o.events = 600;
  if (quick && !rounds_given) o.rounds = 3;
  if (o.full_events == 0) o.full_events = std::max<size_t>(10, o.events / 20);
  return o;
}

size_t round_up(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

int run(const Options &opt) {
  const std::string &ck = opt.checkpoint;
  std::vector<Scenario> scenarios = {
      {"single_normal", "single append", Durability::Normal, ck, 1, opt.events},
      {"single_full", "single append", Durability::Full, ck, 1, opt.full_events},
      {"batch100_normal", "batch of 100", Durability::Normal, ck, 100, round_up(opt.events, 100)},
      {"batch1000_normal", "batch of 1000", Durability::Normal, ck, 1000,
       round_up(opt.events, 1000)},
  };
  if (!opt.only.empty()) {
    for (const std::string &name : opt.only) {
      if (std::none_of(scenarios.begin(), scenarios.end(),
                       [&](const Scenario &s) { return s.name == name; })) {
        std::fprintf(stderr, "bench_append: unknown scenario '%s'\n", name.c_str());
        return 2;
      }
    }
    std::erase_if(scenarios, [&](const Scenario &s) {
      return std::find(opt.only.begin(), opt.only.end(), s.name) == opt.only.end();
    });
  }

  size_t most = 0;
  for (const Scenario &s : scenarios) most = std::max(most, s.events);
  // One event sequence for all scenarios: each uses a prefix of it.
  const std::vector<Event> events = SessionGenerator().generate(most);
  size_t bytes = 0;
  for (const Event &e : events) bytes += e.line.size();

  TempDir dir(opt.dir.empty() ? fs::temp_directory_path() : opt.dir);
  const char *build = CTXDB_BENCH_BUILD_TYPE;
  std::printf("bench_append: ctxdb %s, SQLite %s, build %s\n", ctxdb_version(),
              sqlite3_libversion(), *build ? build : "(none)");
  std::printf("files in %s%s\n", dir.path().c_str(), filesystem_note(dir.path()).c_str());
  std::printf("%d rounds per scenario, ctxdb, the log and raw alternating; mean event "
              "%zu bytes\n",
              opt.rounds, bytes / events.size());
  std::printf(
      "raw SQLite runs with ctxdb's settings: WAL, the same synchronous, "
      "cache_size=%d, mmap_size=%lld, secure_delete=ON, the WAL checkpointed as ctxdb does (%s);\n"
      "freed memory stays in the process\n\n",
      ctxdb::store::kCacheSizePragma, static_cast<long long>(ctxdb::store::kMmapSizePragma),
      ck.empty()       ? "its default: on a thread of its own with durability normal, inside "
                         "the commit with full"
      : ck == "inline" ? "inline: inside the commit"
                       : "background: on a thread of its own");
  std::fflush(stdout);

  std::vector<Samples> results;
  for (const Scenario &sc : scenarios)
    results.push_back(run_scenario(sc, events, opt.rounds, dir.path()));

  std::printf("%-14s %-10s %12s %12s %12s %12s %10s %10s %12s %10s\n", "scenario", "durability",
              "events/round", "ctxdb ev/s", "log ev/s", "raw ev/s", "ctxdb/raw", "log/raw",
              "raw+idx ev/s", "ctxdb/idx");
  std::printf("%-14s %-10s %12s %12s %12s %12s %10s %10s %12s %10s\n", "", "", "", "(median)",
              "(median)", "(median)", "", "", "(median)", "");
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario &sc = scenarios[i];
    double c = median(results[i].ctxdb_eps), r = median(results[i].raw_eps);
    double l = median(results[i].log_eps), ri = median(results[i].raw_indexed_eps);
    std::printf("%-14s %-10s %12zu %12s %12s %12s %10.2f %10.2f %12s %10.2f\n", sc.label.c_str(),
                durability_name(sc.durability), sc.events, with_commas(c).c_str(),
                with_commas(l).c_str(), with_commas(r).c_str(), c / r, l / r,
                with_commas(ri).c_str(), c / ri);
  }
  std::printf("\n");
  // The log (hash chain, validation and ids included) against raw, and
  // ctxdb with every projection on against the same raw.
  auto goal = [](const char *what, const Scenario &sc, double ratio, double want) {
    std::printf("goal: %s, %s at >= %.2f of raw: %.2f, %s\n", what, sc.label.c_str(), want, ratio,
                ratio >= want ? "met" : "NOT met");
  };
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario &sc = scenarios[i];
    if (sc.batch == 1) continue;
    double r = median(results[i].raw_eps);
    goal("the log", sc, median(results[i].log_eps) / r, 0.70);
    goal("every projection on", sc, median(results[i].ctxdb_eps) / r, 0.50);
  }
  std::printf("\n");
  // One JSON object per line, for scripts and CI graphs.
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario &sc = scenarios[i];
    const Samples &s = results[i];
    double c = median(s.ctxdb_eps), r = median(s.raw_eps);
    std::printf("{\"bench\":\"append\",\"scenario\":\"%s\",\"durability\":\"%"
                "s\",\"batch\":%zu,"
                "\"events_per_round\":%zu,\"rounds\":%d,\"event_bytes\":%zu,"
                "\"ctxdb_eps\":%.1f,\"raw_eps\":%.1f,\"ratio\":%.4f,"
                "\"raw_indexed_eps\":%.1f,\"ratio_indexed\":%.4f,"
                "\"log_eps\":%.1f,\"log_ratio\":%.4f,"
                "\"ctxdb_eps_min\":%.1f,\"ctxdb_eps_max\":%.1f,\"raw_eps_min\":"
                "%.1f,\"raw_eps_max\":%.1f,\"checkpoint\":\"%s\"}\n",
                sc.name.c_str(), durability_name(sc.durability), sc.batch, sc.events, opt.rounds,
                bytes / events.size(), c, r, c / r, median(s.raw_indexed_eps),
                c / median(s.raw_indexed_eps), median(s.log_eps), median(s.log_eps) / r,
                *std::min_element(s.ctxdb_eps.begin(), s.ctxdb_eps.end()),
                *std::max_element(s.ctxdb_eps.begin(), s.ctxdb_eps.end()),
                *std::min_element(s.raw_eps.begin(), s.raw_eps.end()),
                *std::max_element(s.raw_eps.begin(), s.raw_eps.end()),
                background_checkpoint(sc) ? "background" : "inline");
  }
  return 0;
}

// Every round opens a fresh file and closes it, freeing its page cache;
// by default glibc hands freed memory back to the kernel and the next round
// takes page faults to get it again, unless the round before it left the
// heap fragmented enough to keep it. Which side paid then depended on who
// ran before it: a raw round ran ~25% faster after an engine round than
// after another raw round. Keeping freed memory in the process (as a
// long-running host, whose page cache stays allocated, effectively does)
// makes every round start from the same heap.
void keep_freed_memory() {
#ifdef __GLIBC__
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_MMAP_THRESHOLD, 32 << 20); // the largest glibc accepts
#endif
}

} // namespace

int main(int argc, char **argv) {
  Options opt = parse_args(argc, argv);
  keep_freed_memory();
  try {
    return run(opt);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "\nbench_append: %s\n", e.what());
    return 1;
  }
}
