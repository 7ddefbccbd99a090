// bench_search: session search over a database of N messages
// (default 1M: agent sessions of bench/agent_session.hpp, 4 messages per 8
// events, whose prompts carry varied words, identifiers, paths, Chinese
// and Japanese so that queries have rare and common terms).
//
// Measured in one run:
//   query latency   ctxdb_search (median of R calls) per kind of query, side
//                   by side with the raw FTS5 MATCH of the same table on a
//                   second connection (ORDER BY rank LIMIT, snippet() of the
//                   hits): the floor of any search over these tables.
//   append cost     append throughput (single events, and NDJSON batches of
//                   1000) of ctxdb as built (indexing deferred to searches,
//                   search_index.hpp), with the time of the search that
//                   then indexes everything appended counted in; against
//                   the same library on a file whose search tables are
//                   empty stand-ins (the view selects nothing, the FTS
//                   tables are plain tables): no index at all; and against
//                   indexing at every commit (a search after every append
//                   or batch: what schema 8 did inside each append).
//   catch-up        on the big database: the latency of a search that first
//                   indexes the N messages appended since the last one,
//                   next to the same search with nothing to index.
//   size            bytes of the events table and of each FTS table's shadow
//                   tables (dbstat): what storing the text again would add.
//
// usage: bench_search [--messages N] [--rounds R] [--append-events N]
#include "agent_session.hpp"
#include "bench_util.hpp"
#include "project/search_tokenizer.hpp"

#include <ctxdb/ctxdb.h>
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using bench::Clock;
using bench::median;
using bench::seconds_since;

namespace {

constexpr size_t kSessionEvents = 20000; // 10k messages per session
constexpr size_t kBatch = 4000;

// A deterministic generator (bench figures must not depend on a seed).
struct Rng {
  uint64_t s = 0x9E3779B97F4A7C15ull;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  size_t below(size_t n) { return size_t(next() % n); }
};

const char *const kZh[] = {"数据库连接错误，请检查配置文件", "这个函数的返回值不正确",
                           "请把日志级别调成调试", "测试在持续集成上失败了",
                           "内存泄漏出现在缓存模块里"};
const char *const kJa[] = {"設定ファイルを読み込みます", "このテストは時々失敗します",
                           "キャッシュの有効期限を確認してください",
                           "データベースの接続がタイムアウトしました"};

// A word of the synthetic vocabulary: rank r of a Zipf-like draw.
std::string word(size_t r) {
  std::string w;
  const char *cons = "bcdfghklmnprstvz", *vow = "aeiou";
  for (size_t k = r + 7; w.size() < 8 && k; k /= 80) {
    w += cons[k % 16];
    w += vow[(k / 16) % 5];
  }
  return w;
}

size_t zipf(Rng &rng, size_t n) { // heavy head, long tail
  double u = double(rng.below(1u << 30)) / double(1u << 30);
  return size_t(double(n) * u * u * u);
}

// A prompt's text: words, an identifier, a path; some in Chinese or Japanese.
std::string prompt_text(Rng &rng, size_t turn) {
  std::string t;
  size_t kind = rng.below(10);
  if (kind == 0) t = std::string(kZh[rng.below(5)]) + " ";
  if (kind == 1) t = std::string(kJa[rng.below(4)]) + " ";
  for (int k = 0; k < 6; ++k) t += word(zipf(rng, 20000)) + " ";
  t += "in handle_request_" + std::to_string(rng.below(500)) + " of src/pkg_" +
       std::to_string(rng.below(100)) + "/mod_" + std::to_string(rng.below(50)) + ".py (turn " +
       std::to_string(turn) + ")";
  return t;
}

// Event i of a session: agent_event's, with a varied prompt.
std::string event(Rng &rng, size_t i) {
  if (i % bench::kTurnEvents != 0) return bench::agent_event(i);
  return R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":")" +
         prompt_text(rng, i / bench::kTurnEvents) + "\"}}";
}

ctxdb_db *open_db(const fs::path &p) {
  ctxdb_db *db = nullptr;
  bench::check(ctxdb_open(p.c_str(), nullptr, 0, &db), nullptr, "open");
  return db;
}

void create_session(ctxdb_db *db, const std::string &id) {
  std::string j = R"({"id":")" + id + R"(","payload":{"agent_id":"bench"}})";
  char *out = nullptr;
  size_t n = 0;
  bench::call(ctxdb_session_create(db, j.data(), j.size(), &out, &n), db, &out, "session_create");
}

void append_batch(ctxdb_db *db, const std::string &sid, const std::string &nd) {
  char *out = nullptr;
  size_t n = 0;
  int rc = ctxdb_append_batch(db, sid.data(), sid.size(), nd.data(), nd.size(), &out, &n);
  bench::call(rc, db, &out, "append_batch");
}

// Builds the database: `messages` messages in sessions of kSessionEvents.
double build(const fs::path &file, size_t messages) {
  ctxdb_db *db = open_db(file);
  Rng rng;
  size_t events = messages * 2; // 4 messages per 8 events
  auto t0 = Clock::now();
  for (size_t done = 0, s = 0; done < events; ++s) {
    std::string sid = "s" + std::to_string(s);
    create_session(db, sid);
    size_t in_session = std::min(kSessionEvents, events - done);
    for (size_t i = 0; i < in_session; i += kBatch) {
      std::string nd;
      for (size_t k = i; k < std::min(in_session, i + kBatch); ++k) nd += event(rng, k) + "\n";
      append_batch(db, sid, nd);
    }
    done += in_session;
    std::fprintf(stderr, "\r  built %zu / %zu events", done, events);
  }
  double secs = seconds_since(t0);
  std::fprintf(stderr, "\n");
  ctxdb_close(db);
  return double(events) / secs;
}

struct Query {
  std::string kind, query, options;
  // The baseline: the same FTS5 queries, raw: (table, MATCH) in order, or
  // a table of nullptr for the scan (instr over the view).
  std::vector<std::pair<const char *, std::string>> raw;
};

double time_search(ctxdb_db *db, const Query &q, int rounds, size_t &hits) {
  std::vector<double> t;
  for (int r = 0; r < rounds + 1; ++r) {
    char *out = nullptr;
    size_t n = 0;
    auto t0 = Clock::now();
    int rc = ctxdb_search(db, q.query.data(), q.query.size(), q.options.data(), q.options.size(),
                          &out, &n);
    double s = seconds_since(t0);
    std::string res = bench::call(rc, db, &out, "search");
    if (r > 0) t.push_back(s);
    hits = 0;
    for (size_t p = 0; (p = res.find("\"event_id\"", p)) != std::string::npos; ++p) ++hits;
  }
  return median(t);
}

double time_raw(sqlite3 *raw, const Query &q, int rounds) {
  std::vector<sqlite3_stmt *> st;
  for (const auto &[table, match] : q.raw) {
    std::string t = table ? table : "";
    std::string sql =
        table
            ? "SELECT rowid,snippet(" + t + ",0,'«','»','…',16) FROM " + t + " WHERE " + t +
                  " MATCH ?1 ORDER BY rank LIMIT 20"
            : "SELECT pos,text FROM search_text WHERE instr(text,?1)>0 ORDER BY pos DESC LIMIT 20";
    sqlite3_stmt *s = nullptr;
    if (sqlite3_prepare_v2(raw, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      throw std::runtime_error(sqlite3_errmsg(raw));
    sqlite3_bind_text(s, 1, match.c_str(), -1, SQLITE_STATIC);
    st.push_back(s);
  }
  std::vector<double> t;
  for (int r = 0; r < rounds + 1; ++r) {
    auto t0 = Clock::now();
    for (sqlite3_stmt *s : st) {
      while (sqlite3_step(s) == SQLITE_ROW) {
      }
      sqlite3_reset(s);
    }
    if (r > 0) t.push_back(seconds_since(t0));
  }
  for (sqlite3_stmt *s : st) sqlite3_finalize(s);
  return median(t);
}

void exec(sqlite3 *raw, const char *sql) {
  char *err = nullptr;
  if (sqlite3_exec(raw, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "?";
    sqlite3_free(err);
    throw std::runtime_error(std::string(sql) + ": " + m);
  }
}

// The bytes of each table (its shadow tables summed for FTS5), by dbstat.
std::map<std::string, int64_t> sizes(sqlite3 *raw) {
  std::map<std::string, int64_t> out;
  sqlite3_stmt *st = nullptr;
  if (sqlite3_prepare_v2(raw, "SELECT name,sum(pgsize) FROM dbstat GROUP BY name", -1, &st,
                         nullptr) != SQLITE_OK)
    return out; // no dbstat in this SQLite
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::string name = reinterpret_cast<const char *>(sqlite3_column_text(st, 0));
    for (const char *fts : {"search_words", "search_grams"})
      if (name.starts_with(fts)) name = fts;
    out[name] += sqlite3_column_int64(st, 1);
  }
  sqlite3_finalize(st);
  return out;
}

// A file whose search tables are empty stand-ins: the library as built,
// minus the index.
void strip_search(const fs::path &file) {
  ctxdb_close(open_db(file)); // migrations
  sqlite3 *raw = nullptr;
  sqlite3_open(file.c_str(), &raw);
  ctxdb::project::register_search_tokenizer(raw); // to drop search_words
  exec(raw, "DROP TABLE search_words; DROP TABLE search_grams; DROP VIEW search_text;"
            "CREATE VIEW search_text(pos,text) AS SELECT pos,NULL FROM events WHERE 0;"
            "CREATE TABLE search_words(rowid INTEGER PRIMARY KEY, text);"
            "CREATE TABLE search_grams(rowid INTEGER PRIMARY KEY, text);");
  sqlite3_close(raw);
}

// A search that finds nothing: on a writable handle, it indexes whatever
// is above the mark first (SearchIndex::catch_up).
void catch_up(ctxdb_db *db) {
  char *out = nullptr;
  size_t n = 0;
  bench::call(ctxdb_search(db, "zqxj", 4, R"({"limit":1})", 11, &out, &n), db, &out, "search");
}

enum class Indexing { kNone, kDeferred, kEveryCommit }; // kNone: a stand-in file

// Events per second, of the appends alone and with the search that then
// indexes what they left (deferred indexing: the whole cost is counted).
struct Rates {
  double single = 0, single_total = 0, batch = 0, batch_total = 0;
};

// Single appends, then batches of 1000.
Rates append_rate(const fs::path &file, size_t events, Indexing mode) {
  ctxdb_db *db = open_db(file);
  create_session(db, "a");
  Rng rng;
  Rates r;
  auto t0 = Clock::now();
  size_t singles = events / 10;
  for (size_t i = 0; i < singles; ++i) {
    std::string e = event(rng, i);
    char *out = nullptr;
    size_t n = 0;
    bench::call(ctxdb_append(db, "a", 1, e.data(), e.size(), &out, &n), db, &out, "append");
    if (mode == Indexing::kEveryCommit) catch_up(db);
  }
  r.single = double(singles) / seconds_since(t0);
  if (mode != Indexing::kNone) catch_up(db);
  r.single_total = double(singles) / seconds_since(t0);
  create_session(db, "b");
  std::vector<std::string> batches;
  for (size_t i = 0; i < events; i += 1000) {
    std::string nd;
    for (size_t k = i; k < i + 1000; ++k) nd += event(rng, k) + "\n";
    batches.push_back(std::move(nd));
  }
  t0 = Clock::now();
  for (const std::string &nd : batches) {
    append_batch(db, "b", nd);
    if (mode == Indexing::kEveryCommit) catch_up(db);
  }
  r.batch = double(events) / seconds_since(t0);
  if (mode != Indexing::kNone) catch_up(db);
  ctxdb_close(db);
  r.batch_total = double(events) / seconds_since(t0);
  return r;
}

void clean(const fs::path &file) {
  fs::remove(file);
  fs::remove(fs::path(file) += "-wal");
  fs::remove(fs::path(file) += "-shm");
}

void measure_appends(const fs::path &dir, size_t events) {
  fs::path files[] = {dir / "deferred.ctxdb", dir / "none.ctxdb", dir / "every.ctxdb"};
  const Indexing modes[] = {Indexing::kDeferred, Indexing::kNone, Indexing::kEveryCommit};
  std::vector<Rates> runs[3];
  for (int r = 0; r < 3; ++r) // interleaved rounds: the machine's noise hits all three
    for (int m = 0; m < 3; ++m) {
      clean(files[m]);
      if (modes[m] == Indexing::kNone) strip_search(files[m]);
      runs[m].push_back(append_rate(files[m], events, modes[m]));
    }
  auto med = [&](int m, double Rates::*f) {
    std::vector<double> v;
    for (const Rates &x : runs[m]) v.push_back(x.*f);
    return median(v);
  };
  double none_single = med(1, &Rates::single), none_batch = med(1, &Rates::batch);
  std::printf("\nappend (events/s, median of 3 interleaved)     single   /none    batch   /none\n");
  auto row = [&](const char *name, int m, double Rates::*single, double Rates::*batch) {
    std::printf("  %-40s %8.0f %7.2f %8.0f %7.2f\n", name, med(m, single),
                med(m, single) / none_single, med(m, batch), med(m, batch) / none_batch);
  };
  row("no index (stand-in tables)", 1, &Rates::single, &Rates::batch);
  row("deferred: the appends", 0, &Rates::single, &Rates::batch);
  row("deferred: the appends + the catch-up", 0, &Rates::single_total, &Rates::batch_total);
  row("indexed at every commit (schema 8)", 2, &Rates::single_total, &Rates::batch_total);
  std::printf(
      "{\"bench\":\"search_append\",\"single_none\":%.0f,\"single_deferred\":%.0f,"
      "\"single_deferred_total\":%.0f,\"single_every_commit\":%.0f,\"batch_none\":%.0f,"
      "\"batch_deferred\":%.0f,\"batch_deferred_total\":%.0f,\"batch_every_commit\":%.0f}\n",
      none_single, med(0, &Rates::single), med(0, &Rates::single_total),
      med(2, &Rates::single_total), none_batch, med(0, &Rates::batch), med(0, &Rates::batch_total),
      med(2, &Rates::batch_total));
}

// The latency of a search that first indexes `lag` new events (half of
// them messages), next to the same search with nothing to index.
void measure_catch_up(ctxdb_db *db, const std::string &query, int rounds) {
  std::printf("\n%-28s %14s %14s\n", "search after N new events", "with catch-up", "nothing new");
  Rng rng;
  int session = 0;
  // 9999: the most a search catches up (a commit indexes beyond the config's search_index_lag,
  // default 10000).
  for (size_t lag : {size_t(10), size_t(100), size_t(1000), size_t(9999)}) {
    std::vector<double> first, again;
    for (int r = 0; r < std::max(3, rounds / 3); ++r) {
      std::string sid = "lag" + std::to_string(session++);
      create_session(db, sid);
      std::string nd;
      for (size_t k = 0; k < lag; ++k) nd += event(rng, k) + "\n";
      append_batch(db, sid, nd);
      for (std::vector<double> *t : {&first, &again}) {
        char *out = nullptr;
        size_t n = 0;
        auto t0 = Clock::now();
        int rc = ctxdb_search(db, query.data(), query.size(), "{}", 2, &out, &n);
        t->push_back(seconds_since(t0));
        bench::call(rc, db, &out, "search");
      }
    }
    std::printf("  N = %-23zu %11.3f ms %11.3f ms\n", lag, median(first) * 1e3,
                median(again) * 1e3);
    std::printf("{\"bench\":\"search_catch_up\",\"events\":%zu,\"ms\":%.4f,"
                "\"nothing_new_ms\":%.4f}\n",
                lag, median(first) * 1e3, median(again) * 1e3);
  }
}

} // namespace

int main(int argc, char **argv) {
  size_t messages = 1000000, append_events = 100000;
  int rounds = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--messages")) messages = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--append-events"))
      append_events = std::strtoull(argv[i + 1], nullptr, 10);
  }
  fs::path dir = fs::temp_directory_path() / ("bench_search." + std::to_string(getpid()));
  fs::create_directories(dir);
  try {
    std::printf("bench_search: %zu messages, SQLite %s, %s build\n", messages, sqlite3_libversion(),
                CTXDB_BENCH_BUILD_TYPE);

    // --- append cost ----------------------------------------------------
    measure_appends(dir, append_events);

    // --- the big database -----------------------------------------------
    fs::path file = dir / "search.ctxdb";
    double rate = build(file, messages);
    std::printf("\nbuilt %zu messages (%zu events) at %.0f events/s (batches of %zu)\n", messages,
                messages * 2, rate, kBatch);
    ctxdb_db *db = open_db(file);
    auto t0 = Clock::now();
    catch_up(db); // what the build's last commits left unindexed
    std::printf("first search after the build (indexes the rest): %.1f ms\n",
                seconds_since(t0) * 1e3);
    sqlite3 *raw = nullptr;
    sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    ctxdb::project::register_search_tokenizer(raw); // search_words' own

    // Words of the prompts' vocabulary: rank 0 is in ~20% of prompts,
    // rank 15000 in ~0.01%.
    std::string rare = word(15000), common = word(0), two = word(1) + " " + word(2);
    auto quoted = [](const std::string &s) { return "\"" + s + "\""; };
    const char *W = "search_words", *G = "search_grams";
    const std::string one = R"({"session_id":"s1"})";
    const Query queries[] = {
        {"rare word", rare, "{}", {{W, quoted(rare)}, {G, quoted(rare)}}},
        {"frequent word", common, "{}", {{W, quoted(common)}}},
        {"tool output word", "passed", "{}", {{W, quoted("passed")}}},
        {"two words", two, "{}", {{W, quoted(word(1)) + " AND " + quoted(word(2))}}},
        {"identifier",
         "handle_request_417",
         "{}",
         {{W, quoted("handle_request_417")}}}, // words fill the limit
        {"piece of ident.",
         "ndle_request_41",
         "{}",
         {{W, quoted("ndle_request_41")}, {G, quoted("ndle_request_41")}}},
        {"path piece",
         "pkg_42/mod_7.",
         "{}",
         {{W, quoted("pkg_42/mod_7.")}, {G, quoted("pkg_42/mod_7.")}}},
        // CJK words are phrases of the words table (search_tokenizer.hpp).
        {"Chinese (4 ch.)", "连接错误", "{}", {{W, quoted("连接错误")}}},
        {"Japanese", "読み込み", "{}", {{W, quoted("読み込み")}}},
        {"Chinese (2 ch.)", "错误", "{}", {{W, quoted("错误")}}},
        {"rare, 1 session", rare, one, {{W, quoted(rare)}, {G, quoted(rare)}}},
        {"frequent, 1 sess.", common, one, {{W, quoted(common)}}},
        {"2 ch., 1 session", "错误", one, {{W, quoted("错误")}}},
        {"FTS syntax", common + " OR " + rare, "{}", {{W, common + " OR " + rare}}},
        {"not FTS syntax", "\"fix (" + common, "{}", {{W, "\"\"\"fix\" AND \"" + common + "\""}}},
    };
    std::printf("\n%-18s %6s %12s %12s %8s\n", "query", "hits", "ctxdb_search", "raw MATCH",
                "ratio");
    for (const Query &q : queries) {
      size_t hits = 0;
      double ours = time_search(db, q, rounds, hits);
      double base = time_raw(raw, q, rounds);
      std::printf("%-18s %6zu %10.3f ms %10.3f ms %8.2f\n", q.kind.c_str(), hits, ours * 1e3,
                  base * 1e3, ours / base);
      std::printf("{\"bench\":\"search_query\",\"kind\":\"%s\",\"messages\":%zu,\"hits\":%zu,"
                  "\"ms\":%.4f,\"raw_ms\":%.4f}\n",
                  q.kind.c_str(), messages, hits, ours * 1e3, base * 1e3);
    }

    measure_catch_up(db, rare, rounds);

    std::map<std::string, int64_t> sz = sizes(raw);
    std::printf("\nsizes (MiB): file %.1f", double(fs::file_size(file)) / 1048576.0);
    for (auto &[name, bytes] : sz)
      if (name == "events" || name.starts_with("search_") || name == "messages")
        std::printf(", %s %.1f", name.c_str(), double(bytes) / 1048576.0);
    std::printf("\n");
    sqlite3_stmt *st = nullptr;
    sqlite3_prepare_v2(raw, "SELECT sum(length(CAST(text AS BLOB))) FROM search_text", -1, &st,
                       nullptr);
    if (sqlite3_step(st) == SQLITE_ROW)
      std::printf("indexed text: %.1f MiB (what a stored copy of it would add)\n",
                  double(sqlite3_column_int64(st, 0)) / 1048576.0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    ctxdb_close(db);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_search: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
