// bench_compact: compaction on agent sessions of 10k and 100k events
// (bench/agent_session.hpp): should_compact, plan, and compact with the
// built-in summarizer (plan + summarize + check + commit), each timed
// (medians); the tokens before and after; then the compile of the
// compacted session against the compile of the same session without the
// compaction, at two budgets, in the same run.
//
// It links the engine directly: the compiler has no C ABI yet.
//
// usage: bench_compact [--sizes 10000,100000] [--rounds R]
#include "agent_session.hpp"
#include "bench_util.hpp"

#include "engine.hpp"

#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using bench::Clock;
using bench::median;
using bench::seconds_since;

namespace {

int64_t int_at(const std::string &json, std::initializer_list<const char *> path) {
  simdjson::dom::parser p;
  simdjson::dom::element e = p.parse(json).value();
  for (const char *k : path) e = e[k].value();
  return e.get_int64().value();
}

void fill(ctxdb::Engine &db, size_t events) {
  db.session_create(R"({"id":"s","payload":{"agent_id":"bench"}})");
  constexpr size_t kBatch = 4000;
  for (size_t i = 0; i < events; i += kBatch)
    db.append_batch("s", bench::agent_events(i, std::min(kBatch, events - i)));
}

struct Compiled {
  double ms;
  int64_t used, segments;
};

Compiled compile(ctxdb::Engine &db, int64_t budget, int rounds) {
  std::string req = R"({"session_id":"s","max_tokens":)" + std::to_string(budget) +
                    R"(,"reserved_output_tokens":4096,"continuation":true})";
  std::vector<double> t;
  std::string out;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = Clock::now();
    out = db.compile(req);
    t.push_back(seconds_since(t0) * 1e3);
  }
  simdjson::dom::parser p;
  simdjson::dom::element b = p.parse(out).value();
  return {median(t), b["budget"]["used"].get_int64().value(),
          int64_t(b["segments"].get_array().size())};
}

void run(const fs::path &dir, size_t events, int rounds) {
  // Two copies of one session: one is compacted, the other stays as it is.
  fs::path a = dir / ("plain-" + std::to_string(events) + ".ctxdb");
  fs::path b = dir / ("compacted-" + std::to_string(events) + ".ctxdb");
  auto t0 = Clock::now();
  {
    ctxdb::Engine db(a.string(), "");
    fill(db, events);
  }
  double fill_s = seconds_since(t0);
  fs::copy_file(a, b);
  ctxdb::Engine plain(a.string(), "");
  ctxdb::Engine db(b.string(), "");

  std::vector<double> should_ms, plan_ms;
  std::string advice, plan;
  for (int r = 0; r < rounds; ++r) {
    auto t = Clock::now();
    advice = db.compact_should("s", "");
    should_ms.push_back(seconds_since(t) * 1e3);
    t = Clock::now();
    plan = db.compact_plan("s", "");
    plan_ms.push_back(seconds_since(t) * 1e3);
  }
  t0 = Clock::now();
  std::string result = db.compact("s", "", nullptr);
  double compact_ms = seconds_since(t0) * 1e3;
  int64_t before = int_at(result, {"tokens_before"}), after = int_at(result, {"tokens_after"});
  int64_t range_events = int_at(result, {"range", "events"});
  // A second compaction after more turns: it inherits the first summary.
  db.append_batch("s", bench::agent_events(events, 800));
  plain.append_batch("s", bench::agent_events(events, 800));
  t0 = Clock::now();
  std::string second = db.compact("s", "", nullptr);
  double second_ms = seconds_since(t0) * 1e3;

  std::printf("\n%zu events (filled in %.1f s), medians of %d rounds\n", events, fill_s, rounds);
  // The bench session reports a constant provider usage (1240 tokens), so
  // the anchored size stays small; the estimate is the cached counts'.
  std::printf("  should_compact           %9.2f ms   context %lld tokens anchored, %lld estimated "
              "(%s)\n",
              median(should_ms), (long long)int_at(advice, {"context_tokens"}),
              (long long)int_at(advice, {"estimated_tokens"}),
              advice.find("\"should_compact\":true") != std::string::npos ? "advised"
                                                                          : "not advised");
  std::printf("  plan                     %9.2f ms   transcript %zu KB\n", median(plan_ms),
              plan.size() / 1024);
  std::printf("  compact (builtin)        %9.2f ms   range %lld events; tokens %lld -> %lld "
              "(ratio %.4f)\n",
              compact_ms, (long long)range_events, (long long)before, (long long)after,
              double(after) / double(before));
  std::printf("  second compact (+800)    %9.2f ms   tokens %lld -> %lld\n", second_ms,
              (long long)int_at(second, {"tokens_before"}),
              (long long)int_at(second, {"tokens_after"}));
  std::printf("  %-22s %14s %14s %8s\n", "compile", "without", "with", "ratio");
  for (int64_t budget : {32000, 200000}) {
    Compiled x = compile(plain, budget, rounds), y = compile(db, budget, rounds);
    std::printf("  budget %-6lld time     %11.2f ms %11.2f ms %8.2f\n", (long long)budget, x.ms,
                y.ms, y.ms / x.ms);
    std::printf("  budget %-6lld used     %14lld %14lld %8.2f\n", (long long)budget,
                (long long)x.used, (long long)y.used, double(y.used) / double(x.used));
    std::printf("{\"bench\":\"compact\",\"events\":%zu,\"budget\":%lld,\"should_ms\":%.3f,"
                "\"plan_ms\":%.3f,\"compact_ms\":%.3f,\"tokens_before\":%lld,\"tokens_after\":%lld,"
                "\"compile_ms_without\":%.3f,\"compile_ms_with\":%.3f,\"used_without\":%lld,"
                "\"used_with\":%lld,\"segments_without\":%lld,\"segments_with\":%lld}\n",
                events, (long long)budget, median(should_ms), median(plan_ms), compact_ms,
                (long long)before, (long long)after, x.ms, y.ms, (long long)x.used,
                (long long)y.used, (long long)x.segments, (long long)y.segments);
  }
}

} // namespace

int main(int argc, char **argv) {
  std::vector<size_t> sizes = {10000, 100000};
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::string list = argv[++i];
      for (size_t at = 0; at < list.size();) {
        size_t comma = list.find(',', at);
        sizes.push_back(std::stoul(list.substr(at, comma - at)));
        at = comma == std::string::npos ? list.size() : comma + 1;
      }
    } else if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_compact [--sizes 10000,100000] [--rounds R]\n");
      return 2;
    }
  }
  try {
    std::printf("bench_compact (%s build): keep_recent_tokens 20000 (default)\n",
                CTXDB_BENCH_BUILD_TYPE);
    std::string tmpl = (fs::temp_directory_path() / "ctxdb-bench-compact-XXXXXX").string();
    fs::path dir = mkdtemp(tmpl.data());
    for (size_t n : sizes) run(dir, n, rounds);
    fs::remove_all(dir);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_compact: %s\n", e.what());
    return 1;
  }
  return 0;
}
