// bench_reads: the cost of reading the working state and a branch path on
// sessions of 1k, 100k and 1M events. The goal is that these
// reads cost the same however long the history: the 1M-event figure within
// 2x of the 1k-event one. The 1k session is the baseline, measured in the
// same process run.
//
// Each session is an agent's history on main with a what-if branch forked
// at three quarters of it. Measured, median of R calls each:
//   state main     ctxdb_state_get of main's current state
//   state fork     the what-if branch's current state
//   state at       time travel: the state right after an event in the
//                  middle of main (a snapshot plus the events after it)
//   path page      open the what-if branch's path and read its first 100
//                  events (the path crosses the fork point)
//
// usage: bench_reads [--sizes N,N,...] [--rounds R] [--quick]
#include "agent_session.hpp"
#include "bench_util.hpp"

#include <ctxdb/ctxdb.h>

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

// Event i with the host id "e<i>", so the benchmark can name it.
std::string with_id(std::string line, size_t i) {
  return line.insert(1, "\"id\":\"e" + std::to_string(i) + "\",");
}

constexpr size_t kBatch = 5000;
constexpr size_t kForkEvents = 64;

struct Session {
  fs::path file;
  ctxdb_db *db = nullptr;
  std::string sid = "bench";
  std::string at_id; // the time-travel target
};

void append(Session &s, const std::string &ndjson) {
  char *out = nullptr;
  size_t n = 0;
  call(ctxdb_append_batch(s.db, s.sid.data(), s.sid.size(), ndjson.data(), ndjson.size(), &out, &n),
       s.db, &out, "append_batch");
}

void fill(Session &s, size_t events) {
  char *out = nullptr;
  size_t n = 0;
  std::string create = R"({"id":"bench","payload":{"agent_id":"bench"}})";
  call(ctxdb_session_create(s.db, create.data(), create.size(), &out, &n), s.db, &out, "create");
  size_t history = events - 1 - kForkEvents - 1; // SessionStarted, fork, BranchCreated
  size_t fork_at = history * 3 / 4 / bench::kTurnEvents * bench::kTurnEvents;
  for (size_t i = 0; i < history; i += kBatch) {
    std::string batch;
    for (size_t k = i; k < std::min(history, i + kBatch); ++k)
      batch += with_id(bench::agent_event(k), k) + "\n";
    append(s, batch);
  }
  std::string fork = R"({"event_id":"e)" + std::to_string(fork_at - 1) +
                     R"(","kind":"what_if","name":"w","id":"w"})";
  call(ctxdb_branch_fork(s.db, s.sid.data(), s.sid.size(), fork.data(), fork.size(), &out, &n),
       s.db, &out, "fork");
  std::string batch;
  for (size_t k = 0; k < kForkEvents; ++k) {
    std::string line = bench::agent_event(fork_at + k, "w");
    batch += line.insert(1, R"("branch_id":"w",)") + "\n";
  }
  append(s, batch);
  // Half way through main, 128 events past a snapshot (one every 256
  // events of a branch; event e<i> has seq i + 2): the same replay length
  // at every size, so the figures compare.
  size_t k = std::max<size_t>(1, history / 2 / 256);
  s.at_id = "e" + std::to_string(256 * k + 128 - 2);
}

template <class Fn> double micros(Fn &&fn) {
  auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// One sample of each read, microseconds.
struct Sample {
  double state_main, state_fork, state_at, path_page;
};

Sample measure_once(Session &s) {
  auto state = [&](const std::string &query) {
    char *out = nullptr;
    size_t n = 0;
    call(ctxdb_state_get(s.db, s.sid.data(), s.sid.size(), query.data(), query.size(), &out, &n),
         s.db, &out, "state_get");
  };
  Sample x;
  x.state_main = micros([&] { state("{}"); });
  x.state_fork = micros([&] { state(R"({"branch_id":"w"})"); });
  x.state_at = micros([&] { state(R"({"at":")" + s.at_id + "\"}"); });
  x.path_page = micros([&] {
    ctxdb_iter *it = nullptr;
    check(ctxdb_branch_path(s.db, s.sid.data(), s.sid.size(), "w", 1, &it), s.db, "branch_path");
    const char *row = nullptr;
    size_t len = 0;
    for (int i = 0; i < 100; ++i)
      if (ctxdb_iter_next(it, &row, &len) != CTXDB_ROW) throw std::runtime_error("path too short");
    ctxdb_iter_free(it);
  });
  return x;
}

struct Figures {
  size_t events;
  double state_main, state_fork, state_at, path_page;
};

// Rounds alternate between the sessions, so a noisy moment of the machine
// falls on every size alike.
std::vector<Figures> measure(std::vector<Session> &sessions, const std::vector<size_t> &sizes,
                             int rounds) {
  std::vector<std::vector<Sample>> samples(sessions.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < sessions.size(); ++i) samples[i].push_back(measure_once(sessions[i]));
  std::vector<Figures> out;
  for (size_t i = 0; i < sessions.size(); ++i) {
    auto med = [&](double Sample::*field) {
      std::vector<double> v;
      for (const Sample &x : samples[i]) v.push_back(x.*field);
      return median(v);
    };
    out.push_back({sizes[i], med(&Sample::state_main), med(&Sample::state_fork),
                   med(&Sample::state_at), med(&Sample::path_page)});
  }
  return out;
}

std::vector<size_t> parse_sizes(const char *arg) {
  std::vector<size_t> sizes;
  for (const char *p = arg; *p;) {
    char *end = nullptr;
    sizes.push_back(std::strtoull(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
  }
  return sizes;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<size_t> sizes{1000, 100000, 1000000};
  int rounds = 41;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizes = parse_sizes(argv[++i]);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick"))
      sizes = {1000, 20000}, rounds = 9;
    else {
      std::fprintf(stderr, "usage: bench_reads [--sizes N,N,...] [--rounds R] [--quick]\n");
      return 2;
    }
  }
  fs::path dir = fs::temp_directory_path() / ("ctxdb-bench-reads-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<Figures> all;
  std::vector<Session> sessions(sizes.size());
  try {
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] < 1000) throw std::runtime_error("sizes must be >= 1000 events");
      Session &s = sessions[i];
      s.file = dir / ("s" + std::to_string(sizes[i]) + ".ctxdb");
      check(ctxdb_open(s.file.c_str(), nullptr, 0, &s.db), nullptr, "open");
      fill(s, sizes[i]);
    }
    all = measure(sessions, sizes, rounds);
    for (Session &s : sessions) ctxdb_close(s.db);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_reads: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  const Figures &base = all.front();
  std::printf("bench_reads: %d rounds, median microseconds per call; ratio = vs %zu events\n",
              rounds, base.events);
  std::printf("%10s %12s %12s %12s %12s   %s\n", "events", "state main", "state fork", "state at",
              "path page", "ratios (main, fork, at, path)");
  double worst = 0;
  for (const Figures &f : all) {
    double r[4] = {f.state_main / base.state_main, f.state_fork / base.state_fork,
                   f.state_at / base.state_at, f.path_page / base.path_page};
    worst = std::max({worst, r[0], r[1], r[2], r[3]});
    std::printf("%10zu %12.1f %12.1f %12.1f %12.1f   %.2f %.2f %.2f %.2f\n", f.events, f.state_main,
                f.state_fork, f.state_at, f.path_page, r[0], r[1], r[2], r[3]);
  }
  std::printf("goal: the largest session within 2x of the smallest: worst ratio %.2f, %s\n", worst,
              worst <= 2 ? "met" : "NOT met");
  for (const Figures &f : all)
    std::printf("{\"bench\":\"reads\",\"events\":%zu,\"rounds\":%d,\"state_main_us\":%.1f,"
                "\"state_fork_us\":%.1f,\"state_at_us\":%.1f,\"path_page_us\":%.1f}\n",
                f.events, rounds, f.state_main, f.state_fork, f.state_at, f.path_page);
  return 0;
}
