// bench_rebuild: how fast ctxdb_rebuild replays the log into the derived
// tables, in events per second, side by side with the floor of any replay:
// raw SQLite reading every row of the same events table in append order.
//
// usage: bench_rebuild [--events N] [--rounds R]
#include "agent_session.hpp"
#include "bench_util.hpp"

#include <ctxdb/ctxdb.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using bench::Clock;

namespace {

using bench::call;
using bench::check;
using bench::median;
using bench::seconds_since;

// Sessions of 1,000 events each, the turns of agent_session.hpp: every
// projection has work to do on the replay.
void fill(ctxdb_db *db, size_t events) {
  char *out = nullptr;
  size_t n = 0;
  for (size_t s = 0; s * 1000 < events; ++s) {
    std::string sid = "ses_" + std::to_string(s);
    std::string create = R"({"id":")" + sid + R"(","payload":{"agent_id":"bench"}})";
    call(ctxdb_session_create(db, create.data(), create.size(), &out, &n), db, &out, "create");
    std::string batch = bench::agent_events(0, std::min<size_t>(999, events - s * 1000 - 1));
    call(ctxdb_append_batch(db, sid.data(), sid.size(), batch.data(), batch.size(), &out, &n), db,
         &out, "batch");
  }
}

double raw_scan(const fs::path &file, size_t &rows) {
  sqlite3 *db = nullptr;
  sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt *q = nullptr;
  sqlite3_prepare_v2(db, "SELECT * FROM events ORDER BY pos", -1, &q, nullptr);
  auto t0 = Clock::now();
  rows = 0;
  size_t bytes = 0; // touch every value, as a replay must
  while (sqlite3_step(q) == SQLITE_ROW) {
    ++rows;
    for (int i = 0; i < sqlite3_column_count(q); ++i) bytes += size_t(sqlite3_column_bytes(q, i));
  }
  double s = seconds_since(t0);
  sqlite3_finalize(q);
  sqlite3_close(db);
  if (bytes == 0) throw std::runtime_error("raw scan read nothing");
  return s;
}

} // namespace

int main(int argc, char **argv) {
  size_t events = 200000;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--events") && i + 1 < argc)
      events = std::strtoull(argv[++i], 0, 10);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick"))
      events = 20000, rounds = 3;
    else {
      std::fprintf(stderr, "usage: bench_rebuild [--events N] [--rounds R] [--quick]\n");
      return 2;
    }
  }
  fs::path dir = fs::temp_directory_path() / ("ctxdb-bench-rebuild-" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path file = dir / "rebuild.ctxdb";
  try {
    ctxdb_db *db = nullptr;
    check(ctxdb_open(file.c_str(), nullptr, 0, &db), nullptr, "open");
    fill(db, events);
    std::vector<double> ctxdb_eps, check_eps, search_eps, repair_eps, raw_eps;
    // Each timed rebuild ends by checkpointing what it wrote into the
    // database file (a connection of the bench's own): the WAL then starts
    // empty for the next one, and no rebuild's time depends on whether its
    // commit happened to cross the auto-checkpoint size left by the one
    // before (which made every other rebuild pay for two).
    sqlite3 *ckpt = nullptr;
    if (sqlite3_open(file.c_str(), &ckpt) != SQLITE_OK)
      throw std::runtime_error("cannot open the file to checkpoint it");
    // A truncating checkpoint waits for a pass of ctxdb's own checkpointer
    // thread (store/checkpointer.hpp) that a commit started, rather than
    // giving up half done.
    sqlite3_busy_timeout(ckpt, 60000);
    auto checkpoint = [&] {
      if (sqlite3_exec(ckpt, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr) !=
          SQLITE_OK)
        throw std::runtime_error(std::string("checkpoint: ") + sqlite3_errmsg(ckpt));
    };
    checkpoint(); // the fill's WAL: not a rebuild's
    // `repair`: a derived row was forged first (untimed), so the rebuild
    // must find it and commit the replayed tables; an identical rebuild
    // writes nothing (it rolls back).
    auto timed_rebuild = [&](const char *opts, bool repair = false) {
      if (repair && sqlite3_exec(ckpt, "UPDATE sessions SET agent_id='forged' WHERE id='ses_0'",
                                 nullptr, nullptr, nullptr) != SQLITE_OK)
        throw std::runtime_error(std::string("forging a row: ") + sqlite3_errmsg(ckpt));
      char *out = nullptr;
      size_t n = 0;
      auto t0 = Clock::now();
      std::string report =
          call(ctxdb_rebuild(db, opts, std::strlen(opts), &out, &n), db, &out, "rebuild");
      checkpoint();
      double eps = double(events) / seconds_since(t0);
      bool identical = report.find("\"identical\":true") != std::string::npos;
      if (identical == repair)
        throw std::runtime_error(repair ? "rebuild did not find the forged row: " + report
                                        : "rebuild did not reproduce the tables: " + report);
      return eps;
    };
    for (int r = 0; r < rounds; ++r) {
      size_t rows = 0;
      raw_eps.push_back(double(events) / raw_scan(file, rows));
      if (rows != events)
        throw std::runtime_error("raw scan saw " + std::to_string(rows) + " rows");
      ctxdb_eps.push_back(timed_rebuild("{}"));
      check_eps.push_back(timed_rebuild(R"({"check":true})"));
      search_eps.push_back(timed_rebuild(R"({"search":true})"));
      repair_eps.push_back(timed_rebuild("{}", true));
    }
    ctxdb_close(db);
    sqlite3_close(ckpt);
    double c = median(ctxdb_eps), checked = median(check_eps), raw = median(raw_eps);
    double searched = median(search_eps), repaired = median(repair_eps);
    std::printf("bench_rebuild: %zu events, %d rounds, medians; each rebuild timed with the\n"
                "checkpoint of what it wrote\n",
                events, rounds);
    std::printf("%-44s %14s\n", "", "events/s");
    std::printf("%-44s %14.0f\n", "ctxdb_rebuild (search index kept)", c);
    std::printf("%-44s %14.0f\n", "ctxdb_rebuild --check", checked);
    std::printf("%-44s %14.0f\n", "ctxdb_rebuild --search (search re-indexed)", searched);
    std::printf("%-44s %14.0f\n", "ctxdb_rebuild repairing a row (commits)", repaired);
    std::printf("%-44s %14.0f\n", "raw SQLite scan of events", raw);
    std::printf("ratio ctxdb/raw scan: %.2f; goal >= 300000 events/s: %s\n", c / raw,
                c >= 300000 ? "met" : "NOT met");
    std::printf("{\"bench\":\"rebuild\",\"events\":%zu,\"rounds\":%d,\"ctxdb_eps\":%.0f,"
                "\"check_eps\":%.0f,\"search_eps\":%.0f,\"repair_eps\":%.0f,\"raw_scan_eps\":%.0f,"
                "\"ratio\":%.4f}\n",
                events, rounds, c, checked, searched, repaired, raw, c / raw);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_rebuild: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
