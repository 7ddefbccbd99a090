// bench_compile: the context compiler's latency, and how it scales.
//
// The goals: compiling a 32k and a 128k budget on sessions of 1k,
// 100k and 1M events, the 1M figure within 1.5x of the 1k figure, and a
// median under 2 ms for 128k. Each session is an agent's history
// (bench/agent_session.hpp) with a compaction every kCompactEvery events
// keeping the last kKeepEvents; the request carries system instructions,
// five tool specs and the built-in redaction, as a coding agent's does.
// The 1k session is the baseline, measured in the same run.
//
// Beside it, the Pi coding agent (bench/peers/pi_context.mjs): on the same
// sessions at 10k and 50k events, Pi's SessionManager.open +
// buildSessionContext against ctxdb's open + compile of a budget large
// enough to hold the same context. Skipped, with a note, when node or
// bench/peers/node_modules is missing (cd bench/peers && npm ci).
//
// usage: bench_compile [--sizes N,N,...] [--peer-sizes N,N,...] [--rounds R] [--quick]
#include "agent_session.hpp"
#include "bench_util.hpp"
#include "engine.hpp"

#include <simdjson.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using bench::Clock;
using bench::median;

namespace {

constexpr size_t kBatch = 5000;
constexpr size_t kCompactEvery = 1000;
constexpr size_t kKeepEvents = 200;

std::string with_id(std::string line, size_t i) {
  return line.insert(1, "\"id\":\"e" + std::to_string(i) + "\",");
}

// The session's history: agent turns, and every kCompactEvery events a
// compaction keeping from the turn kKeepEvents back.
std::string history(size_t first, size_t count, size_t &compactions) {
  std::string out;
  for (size_t i = first; i < first + count; ++i) {
    out += with_id(bench::agent_event(i), i) + "\n";
    if ((i + 1) % kCompactEvery == 0) {
      size_t kept = (i + 1 - kKeepEvents) / bench::kTurnEvents * bench::kTurnEvents;
      out += R"({"type":"CompactionCompleted","actor":"ctxdb","payload":{"summary":{"goal":"make )"
             R"(the failing tests pass","progress":["fixed )" +
             std::to_string(i / bench::kTurnEvents) +
             R"( turns"],"files":["src/module_1.py"]},"first_kept_event_id":"e)" +
             std::to_string(kept) + R"(","tokens_before":90000,"tokens_after":2000}})" + "\n";
      ++compactions;
    }
  }
  return out;
}

void fill(ctxdb::Engine &db, size_t events) {
  db.session_create(R"({"id":"bench","payload":{"agent_id":"bench"}})");
  size_t compactions = 0;
  for (size_t i = 0; i + 1 < events; i += kBatch)
    db.append_batch("bench", history(i, std::min(kBatch, events - 1 - i), compactions));
}

std::string instructions() {
  std::string text = "You are a coding agent working in a Python repository. ";
  while (text.size() < 6000)
    text += "Run the tests before and after each change; keep changes small and explain them. ";
  return text;
}

std::string request(int64_t budget) {
  static const std::string system = instructions();
  std::string tools;
  for (const char *name : {"bash", "read_file", "write_file", "edit", "grep"})
    tools += std::string(tools.empty() ? "" : ",") + R"({"name":")" + name +
             R"(","description":"the )" + name +
             R"( tool","parameters":{"type":"object","properties":{"arg":{"type":"string"}}}})";
  // The sessions end on the agent's answer: a continuation compiles what
  // the same session compiled before there was an end to check.
  return R"({"session_id":"bench","max_tokens":)" + std::to_string(budget) +
         R"(,"reserved_output_tokens":4096,"continuation":true,"instructions":[{"kind":"system","text":")" +
         system + R"("}],"tools":[)" + tools + "]}";
}

template <class Fn> double micros(Fn &&fn) {
  auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

struct Session {
  size_t events;
  fs::path file;
  std::unique_ptr<ctxdb::Engine> db;
};

// Compile latency per session and budget, rounds interleaved across
// sessions so a noisy moment falls on every size alike.
void measure_scaling(std::vector<Session> &sessions, int rounds) {
  const std::array<int64_t, 2> budgets{32768, 131072};
  std::vector<std::array<std::vector<double>, 2>> samples(sessions.size());
  std::array<std::string, 2> requests{request(budgets[0]), request(budgets[1])};
  std::vector<std::array<std::string, 2>> sizes(sessions.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < sessions.size(); ++i)
      for (size_t b = 0; b < 2; ++b) {
        std::string bundle;
        samples[i][b].push_back(micros([&] { bundle = sessions[i].db->compile(requests[b]); }));
        if (r == 0) {
          simdjson::dom::parser p;
          auto doc = p.parse(bundle);
          sizes[i][b] = std::to_string(int64_t(doc["budget"]["used"])) + " tokens, " +
                        std::to_string(doc["segments"].get_array().size()) + " segments";
        }
      }
  std::printf("\ncompile latency (median of %d, microseconds; ratio to the 1k session)\n", rounds);
  std::printf("%10s  %-8s %10s %8s   %s\n", "events", "budget", "median", "ratio", "bundle");
  std::array<double, 2> base{};
  for (size_t i = 0; i < sessions.size(); ++i)
    for (size_t b = 0; b < 2; ++b) {
      double m = median(samples[i][b]);
      if (i == 0) base[b] = m;
      std::printf("%10zu  %-8s %10.0f %8.2f   %s\n", sessions[i].events, b == 0 ? "32k" : "128k", m,
                  m / base[b], sizes[i][b].c_str());
      std::printf("{\"bench\":\"compile\",\"events\":%zu,\"budget\":%lld,\"median_us\":%.1f,"
                  "\"ratio_to_smallest\":%.3f}\n",
                  sessions[i].events, (long long)budgets[b], m, m / base[b]);
    }
}

// Pi's open + context against ctxdb's open + compile on the same session.
void compare_with_pi(const fs::path &dir, size_t events, int rounds) {
  fs::path peers = fs::path(CTXDB_SOURCE_DIR) / "bench" / "peers";
  if (!fs::exists(peers / "node_modules") || std::system("node --version > /dev/null 2>&1")) {
    std::printf("pi peer at %zu events: skipped (needs node and `cd bench/peers && npm ci`)\n",
                events);
    return;
  }
  fs::path file = dir / ("pi" + std::to_string(events) + ".ctxdb");
  fs::path exported = dir / ("pi" + std::to_string(events) + ".ndjson");
  {
    ctxdb::Engine db(file.string(), "");
    fill(db, events);
    std::FILE *f = std::fopen(exported.c_str(), "w");
    int64_t cursor = 0;
    for (;;) {
      auto rows = db.events_page(std::string_view("bench"), cursor, -1, 5000);
      for (auto &row : rows) std::fprintf(f, "%s\n", row.c_str());
      if (rows.size() < 5000) break;
    }
    std::fclose(f);
  }
  // Everything after the latest compaction fits, as in Pi's context.
  std::string req = request(1000000);
  std::vector<double> ours;
  std::string bundle;
  for (int r = 0; r < rounds + 2; ++r) {
    double t = micros([&] {
      ctxdb::Engine db(file.string(), "");
      bundle = db.compile(req);
    });
    if (r >= 2) ours.push_back(t / 1000);
  }
  std::string cmd = "node " + (peers / "pi_context.mjs").string() + " --events " +
                    exported.string() + " --runs " + std::to_string(rounds);
  std::FILE *p = popen(cmd.c_str(), "r");
  std::string line;
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) line += buf;
  if (!p || pclose(p) != 0 || line.empty()) {
    std::printf("pi peer at %zu events: failed to run `%s`\n", events, cmd.c_str());
    return;
  }
  simdjson::dom::parser parser;
  auto doc = parser.parse(line);
  double pi_total = double(doc["total_ms"]["median"]);
  double pi_open = double(doc["open_ms"]["median"]);
  double pi_context = double(doc["context_ms"]["median"]);
  int64_t pi_messages = int64_t(doc["messages_in_context"]);
  simdjson::dom::parser bp;
  auto b = bp.parse(bundle);
  double mine = median(ours);
  std::printf("%10zu events  ctxdb open+compile %8.2f ms (%zu segments)   pi open %8.2f + "
              "context %8.2f = %8.2f ms (%lld messages)   ctxdb/pi %.4f\n",
              events, mine, b["segments"].get_array().size(), pi_open, pi_context, pi_total,
              (long long)pi_messages, mine / pi_total);
  std::printf("{\"bench\":\"compile_vs_pi\",\"events\":%zu,\"ctxdb_ms\":%.3f,\"pi_ms\":%.3f,"
              "\"ratio\":%.4f}\n",
              events, mine, pi_total, mine / pi_total);
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
  std::vector<size_t> sizes{1000, 100000, 1000000}, peer_sizes{10000, 50000};
  int rounds = 41;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizes = parse_sizes(argv[++i]);
    else if (!std::strcmp(argv[i], "--peer-sizes") && i + 1 < argc)
      peer_sizes = parse_sizes(argv[++i]);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick"))
      sizes = {1000, 20000}, peer_sizes = {10000}, rounds = 9;
    else {
      std::fprintf(stderr, "usage: bench_compile [--sizes N,...] [--peer-sizes N,...] "
                           "[--rounds R] [--quick]\n");
      return 2;
    }
  }
  std::printf("bench_compile (%s build)\n", CTXDB_BENCH_BUILD_TYPE);
  fs::path dir = fs::temp_directory_path() / ("ctxdb-bench-compile-" + std::to_string(getpid()));
  fs::create_directories(dir);
  try {
    std::vector<Session> sessions;
    for (size_t events : sizes) {
      Session s{events, dir / ("s" + std::to_string(events) + ".ctxdb"), nullptr};
      s.db = std::make_unique<ctxdb::Engine>(s.file.string(), "");
      fill(*s.db, events);
      sessions.push_back(std::move(s));
    }
    measure_scaling(sessions, rounds);
    sessions.clear();
    std::printf("\nagainst the Pi coding agent (median of %d)\n", std::max(rounds / 4, 5));
    for (size_t events : peer_sizes) compare_with_pi(dir, events, std::max(rounds / 4, 5));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_compile: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
