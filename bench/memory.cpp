// bench_memory: memory retrieval latency (a top-20 query, plain words, in
// one project's scope plus global) with 10k and 1M memories, side by side
// with the floor of any such search: a raw SQLite FTS5 query (bm25, ORDER BY
// rank LIMIT 20, no filters) over a plain FTS5 table holding the very same
// indexed text, run in the same process on the same file.
//
// Memories are generated in-process: 100 projects, a tenth global, 8-30
// words each from a 20k-word Zipf vocabulary, two keywords. Queries are
// three words of middle frequency (ranks 200-5000). Both sides run the same
// MATCH expression. The engine side is memory::retrieve() (what the
// compiler calls: one FTS query per scope over the scope's rowid range,
// the reader, validity, expiry and sensitivity filters, the blend over the
// 200 best bm25 matches, token counts, the budget fit); "abi" adds the JSON round trip of
// ctxdb_memory_retrieve's engine call (usage recording off).
//
// Two orders, two figures for the engine. "after raw": each engine query
// runs right after the previous raw query, a 7-13 ms scan of three
// doclists over all the memories that leaves the CPU caches cold (the
// worst case: a retrieval after unrelated heavy work). "stream": the
// engine's queries back to back, each on new words and a new project, as
// a compiler running retrievals sees them. The baseline is measured in the
// first order only.
//
// Each size is measured as its writes left memory_fts (a segment per
// batch of 5000, partly merged by FTS5), then again after ctxdb_optimize
// merged it into one segment, and the baseline's table with it: the
// "segments" column tells the two apart.
//
// It links the engine (memory::retrieve is the compiler's entry point).
//
// usage: bench_memory [--sizes 10000,1000000] [--queries N] [--dir D]
//   --dir D keeps the generated files in D and reuses them on the next run
//   (already merged by the previous run: only one row is printed then).
//   --as-built measures the index as it is, without merging it.
#include "bench_util.hpp"

#include "engine.hpp"
#include "memory/retrieve.hpp"
#include "memory/search_text.hpp"
#include "store/fts_merge.hpp"
#include "store/store.hpp"
#include "util/ids.hpp"

#include <sqlite3.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using bench::Clock;
using bench::median;
using bench::seconds_since;
using namespace ctxdb;

namespace {

constexpr int kVocab = 20000;
constexpr int kProjects = 100;
constexpr int64_t kT0 = 1700000000000;

std::string word(int rank) {
  // Pronounceable, distinct, deterministic: base-20 syllables.
  static const char *syl[] = {"ka", "lo", "mi", "ne", "ru", "ta", "vi", "so", "pe", "du",
                              "ga", "zo", "fi", "be", "hu", "ja", "wo", "xe", "yu", "qi"};
  std::string w;
  int r = rank + 20;
  while (r > 0) {
    w += syl[r % 20];
    r /= 20;
  }
  return w;
}

// Zipf(1.0) over [0, kVocab): inverse-CDF table.
struct Zipf {
  std::vector<double> cdf;
  Zipf() {
    double sum = 0;
    for (int i = 0; i < kVocab; ++i) cdf.push_back(sum += 1.0 / (i + 1));
    for (double &c : cdf) c /= sum;
  }
  int draw(std::mt19937_64 &rng) {
    double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return int(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  }
};

void build(const std::string &path, int64_t n) {
  Engine db(path, "");
  db.session_create(R"({"id":"s","ts":1700000000000,"payload":{"agent_id":"bench"}})");
  db.append("s", R"({"id":"e1","type":"UserPromptSubmitted","actor":"user","ts":1700000000000,)"
                 R"("payload":{"text":"x"}})");
  std::mt19937_64 rng(42);
  Zipf zipf;
  std::string batch;
  auto t0 = Clock::now();
  for (int64_t i = 0; i < n; ++i) {
    int words = 8 + int(rng() % 23);
    std::string content;
    for (int k = 0; k < words; ++k) content += (k ? " " : "") + word(zipf.draw(rng));
    bool global = rng() % 10 == 0;
    char line[1024];
    std::snprintf(line, sizeof line,
                  R"({"type":"MemoryWritten","actor":"bench","ts":%lld,"payload":{)"
                  R"("memory_id":"m%lld","scope":"%s",%s"kind":"fact","content":"%s",)"
                  R"("keywords":["%s","%s"],"source_refs":["e1"],"priority":%d,)"
                  R"("confidence":%.2f,"update_policy":"manual"}})",
                  (long long)(kT0 + i), (long long)i, global ? "global" : "project",
                  global ? ""
                         : ("\"scope_id\":\"p" + std::to_string(rng() % kProjects) + "\",").c_str(),
                  content.c_str(), word(zipf.draw(rng)).c_str(), word(zipf.draw(rng)).c_str(),
                  int(rng() % 101), double(rng() % 101) / 100);
    batch += line;
    batch += '\n';
    if ((i + 1) % 5000 == 0 || i + 1 == n) {
      db.append_batch("s", batch);
      batch.clear();
    }
  }
  std::fprintf(stderr, "  built %lld memories in %.1f s\n", (long long)n, seconds_since(t0));
}

// The baseline table: the same indexed text in a plain FTS5 table.
void build_baseline(const std::string &path) {
  sqlite3 *db = nullptr;
  sqlite3_open(path.c_str(), &db);
  char *err = nullptr;
  int rc = sqlite3_exec(db,
                        "CREATE VIRTUAL TABLE IF NOT EXISTS bench_fts USING fts5(c, k, "
                        "tokenize='unicode61 remove_diacritics 2');"
                        "DELETE FROM bench_fts;"
                        "INSERT INTO bench_fts(rowid,c,k) SELECT doc_id,search_content,"
                        "search_keywords FROM memories;",
                        nullptr, nullptr, &err);
  if (rc != SQLITE_OK) throw std::runtime_error(std::string("baseline: ") + (err ? err : ""));
  sqlite3_close(db);
}

// ctxdb_optimize's merge of the engine's indexes, and the same for the
// baseline's table.
void optimize(const std::string &path) {
  Engine(path, "").optimize("");
  sqlite3 *db = nullptr;
  sqlite3_open(path.c_str(), &db);
  char *err = nullptr;
  int rc = sqlite3_exec(db, "INSERT INTO bench_fts(bench_fts) VALUES('optimize')", nullptr, nullptr,
                        &err);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error(std::string("optimize: ") + (err ? err : ""));
}

int64_t memory_segments(const std::string &path) {
  store::Store s(path, store::parse_config(R"({"read_only":true})"));
  return int64_t(store::fts_shape(s, "memory_fts").segment_pages.size());
}

struct Row {
  int64_t n;
  double engine_med, engine_p90, stream_med, stream_p90, abi_med, raw_med, raw_p90;
  double hits;
};

Row measure(const std::string &path, int64_t n, int queries) {
  std::mt19937_64 rng(7);
  std::vector<std::string> texts;
  std::vector<int> projects;
  for (int q = 0; q < queries; ++q) {
    std::string t;
    for (int k = 0; k < 3; ++k) t += (k ? " " : "") + word(200 + int(rng() % 4800));
    texts.push_back(t);
    projects.push_back(int(rng() % kProjects));
  }
  store::Store store(path, {});
  Engine engine(path, "");
  sqlite3 *raw = nullptr;
  sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt *st = nullptr;
  sqlite3_prepare_v2(raw,
                     "SELECT rowid,bm25(bench_fts,1.0,2.0) FROM bench_fts WHERE bench_fts MATCH ? "
                     "ORDER BY rank LIMIT 20",
                     -1, &st, nullptr);
  std::vector<double> eng, stream, abi, base;
  double hits = 0;
  const token::Counter &counter = token::default_counter();
  auto query = [&](int q) {
    memory::Query mq;
    mq.text = texts[q];
    mq.scopes = {{"project", "p" + std::to_string(projects[q])}, {"global", ""}};
    mq.now = kT0 + n + 1000;
    mq.limit = 20;
    mq.record_usage = false;
    return mq;
  };
  for (int round = 0; round < 2; ++round) { // the first round warms the cache
    for (int q = 0; q < queries; ++q) {
      memory::Query mq = query(q);
      auto t0 = Clock::now();
      memory::Retrieval r = memory::retrieve(store, mq, counter);
      double e = seconds_since(t0);
      std::string json = R"({"query":")" + texts[q] + R"(","scopes":[{"scope":"project","id":"p)" +
                         std::to_string(projects[q]) + R"("},{"scope":"global"}],"now":)" +
                         std::to_string(mq.now) + R"(,"record_usage":false})";
      t0 = Clock::now();
      std::string out = engine.memory_retrieve(json);
      double a = seconds_since(t0);
      std::string match = memory::words_query(texts[q], false);
      t0 = Clock::now();
      sqlite3_bind_text(st, 1, match.c_str(), int(match.size()), SQLITE_TRANSIENT);
      int rows = 0;
      while (sqlite3_step(st) == SQLITE_ROW) ++rows;
      sqlite3_reset(st);
      double b = seconds_since(t0);
      if (round == 1) {
        eng.push_back(e);
        abi.push_back(a);
        base.push_back(b);
        hits += double(r.included.size());
      }
    }
  }
  for (int round = 0; round < 2; ++round) { // the engine alone, back to back
    for (int q = 0; q < queries; ++q) {
      memory::Query mq = query(q);
      auto t0 = Clock::now();
      memory::Retrieval r = memory::retrieve(store, mq, counter);
      double e = seconds_since(t0);
      if (round == 1) stream.push_back(e);
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(raw);
  auto p90 = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[size_t(double(v.size() - 1) * 0.9)];
  };
  return {n,
          median(eng) * 1e3,
          p90(eng) * 1e3,
          median(stream) * 1e3,
          p90(stream) * 1e3,
          median(abi) * 1e3,
          median(base) * 1e3,
          p90(base) * 1e3,
          hits / queries};
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes{10000, 1000000};
  int queries = 200;
  std::string keep;
  bool as_built = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char *p = std::strtok(argv[++i], ","); p; p = std::strtok(nullptr, ","))
        sizes.push_back(std::atoll(p));
    } else if (a == "--queries" && i + 1 < argc) {
      queries = std::atoi(argv[++i]);
    } else if (a == "--dir" && i + 1 < argc) {
      keep = argv[++i];
    } else if (a == "--as-built") {
      as_built = true;
    } else {
      std::fprintf(stderr,
                   "usage: bench_memory [--sizes N,M] [--queries N] [--dir D] [--as-built]\n");
      return 2;
    }
  }
  fs::path dir = keep.empty()
                     ? fs::temp_directory_path() / ("bench_memory." + std::to_string(getpid()))
                     : fs::path(keep);
  fs::create_directories(dir);
  std::printf("bench_memory (%s build): top-20 retrieval, 3-word queries, %d queries per size\n\n",
              CTXDB_BENCH_BUILD_TYPE, queries);
  std::printf("engine after raw: each query right after a raw one (cold CPU caches); "
              "stream: back to back\n\n");
  std::printf("%10s  %9s  %14s  %14s  %13s  %13s  %12s  %14s  %14s  %8s  %6s\n", "memories",
              "segments", "after raw med", "after raw p90", "stream med ms", "stream p90 ms",
              "abi med ms", "raw fts med ms", "raw fts p90 ms", "ratio", "hits");
  for (int64_t n : sizes) {
    std::string path = (dir / ("mem" + std::to_string(n) + ".ctxdb")).string();
    if (!fs::exists(path)) {
      build(path, n);
      build_baseline(path);
    }
    // As the writes left the index, then merged into one segment (the
    // baseline's table too): what ctxdb_optimize gives after a bulk load.
    for (bool optimized : {false, true}) {
      if (optimized) optimize(path);
      int64_t segments = memory_segments(path);
      Row r = measure(path, n, queries);
      std::printf(
          "%10lld  %9lld  %14.3f  %14.3f  %13.3f  %13.3f  %12.3f  %14.3f  %14.3f  %7.2fx  %6.1f\n",
          (long long)r.n, (long long)segments, r.engine_med, r.engine_p90, r.stream_med,
          r.stream_p90, r.abi_med, r.raw_med, r.raw_p90, r.engine_med / r.raw_med, r.hits);
      std::printf("{\"bench\":\"memory\",\"memories\":%lld,\"memory_fts_segments\":%lld,"
                  "\"engine_median_ms\":%.4f,\"engine_p90_ms\":%.4f,"
                  "\"engine_stream_median_ms\":%.4f,\"engine_stream_p90_ms\":%.4f,"
                  "\"abi_median_ms\":%.4f,"
                  "\"raw_fts_median_ms\":%.4f,\"raw_fts_p90_ms\":%.4f,\"hits\":%.1f}\n",
                  (long long)r.n, (long long)segments, r.engine_med, r.engine_p90, r.stream_med,
                  r.stream_p90, r.abi_med, r.raw_med, r.raw_p90, r.hits);
      std::fflush(stdout);
      if (segments <= 1 || as_built) break; // merged already, or asked not to merge
    }
  }
  if (keep.empty()) fs::remove_all(dir);
  return 0;
}
