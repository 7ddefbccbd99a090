// bench_transcript_import: ctxdb_transcript_import of a long Pi session
// file against ctxdb_append_batch of the same events already converted,
// side by side in one run, and the peak memory of an import at two file
// sizes. The goal: reading another agent's file costs at most twice the
// append of what it means (import ≥ 0.5 of append's MB/s).
//
// The transcript is generated in Pi's format (a header, then turns of a
// user prompt, an assistant message with text and a tool call, its tool
// result and the answer; ~3 KB a turn) up to --mb megabytes. The baseline
// is the events a first import stored, read back and given to
// ctxdb_append_batch as NDJSON (type, actor, id, parent_id, ts, payload):
// the same rows, without the reading. Each side, each round: a fresh file
// (durability "normal"), one call (one transaction), close; rounds rotate
// the sides' order; medians. Both rates are MB of transcript per second.
//
// Peak memory: the import of a file of --mb and of 4×--mb, each in a
// child process of its own (this program re-run with --child, so nothing
// of the parent's is counted), its VmHWM; beside it, the
// same measure of the append_batch of the events the file converts to.
//
// usage: bench_transcript_import [--mb N] [--rounds R]
#include "bench_util.hpp"

#include "json/json_writer.hpp"

#include <ctxdb/ctxdb.h>
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#ifndef CTXDB_BENCH_BUILD_TYPE
#define CTXDB_BENCH_BUILD_TYPE ""
#endif

namespace fs = std::filesystem;
using bench::call;
using bench::check;
using bench::Clock;
using bench::median;

namespace {

const char *kConfig = R"({"durability":"normal"})";

std::string words(size_t i, size_t n) {
  static const char *w[] = {"the", "build", "fails", "in",  "module", "parser", "because",
                            "a",   "token", "is",    "not", "closed", "so",     "we"};
  std::string s;
  for (size_t k = 0; k < n; ++k) s += std::string(k ? " " : "") + w[(i + k * 7) % 14];
  return s;
}

// One Pi entry line: {"type":"message","id","parentId","timestamp","message"}.
std::string entry(size_t id, size_t parent, int64_t ms, const std::string &message) {
  char ids[64];
  std::snprintf(ids, sizeof ids, "\"id\":\"e%08zx\",\"parentId\":", id);
  std::string line = std::string("{\"type\":\"message\",") + ids;
  if (parent == 0) {
    line += "null";
  } else {
    char p[16];
    std::snprintf(p, sizeof p, "\"e%08zx\"", parent);
    line += p;
  }
  return line + ",\"timestamp\":\"2025-01-10T10:00:00.000Z\",\"message\":" + message + "}\n";
}

std::string usage(int64_t in, int64_t out) {
  return ",\"api\":\"anthropic-messages\",\"provider\":\"anthropic\",\"model\":\"claude-sonnet-"
         "4-5\",\"usage\":{\"input\":" +
         std::to_string(in) + ",\"output\":" + std::to_string(out) +
         ",\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":" + std::to_string(in + out) + "}";
}

// A Pi session file of about `bytes`.
std::string pi_transcript(size_t bytes) {
  std::string s = "{\"type\":\"session\",\"version\":3,\"id\":\"bench-0001\",\"timestamp\":\"2025-"
                  "01-10T10:00:00.000Z\",\"cwd\":\"/home/dev/shop\"}\n";
  size_t id = 0;
  int64_t ms = 1736503200000;
  for (size_t turn = 0; s.size() < bytes; ++turn) {
    std::string t = std::to_string(turn);
    auto ts = [&] { return ",\"timestamp\":" + std::to_string(ms += 700) + "}"; };
    s += entry(id + 1, id, ms, "{\"role\":\"user\",\"content\":\"" + words(turn, 40) + "\"" + ts());
    s += entry(id + 2, id + 1, ms,
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"" +
                   words(turn + 3, 60) + "\"},{\"type\":\"toolCall\",\"id\":\"toolu_" + t +
                   "\",\"name\":\"bash\",\"arguments\":{\"command\":\"make test " + t + "\"}}]" +
                   usage(1200, 80) + ",\"stopReason\":\"toolUse\"" + ts());
    std::string output;
    for (int l = 0; l < 12; ++l) output += words(turn + l, 14) + "\\n";
    s += entry(id + 3, id + 2, ms,
               "{\"role\":\"toolResult\",\"toolCallId\":\"toolu_" + t +
                   "\",\"toolName\":\"bash\",\"content\":[{\"type\":\"text\",\"text\":\"" + output +
                   "\"}],\"isError\":false" + ts());
    s += entry(id + 4, id + 3, ms,
               "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"" +
                   words(turn + 5, 90) + "\"}]" + usage(1400, 120) + ",\"stopReason\":\"stop\"" +
                   ts());
    id += 4;
  }
  return s;
}

std::string import_options(const std::string &file) {
  return R"({"format":"pi","path":")" + file + R"("})";
}

ctxdb_db *open_fresh(const std::string &path, const char *config = kConfig) {
  for (const char *suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  ctxdb_db *db = nullptr;
  check(ctxdb_open(path.c_str(), config, std::strlen(config), &db), nullptr, "open");
  return db;
}

// The events an import stored, as a host would append them.
struct Converted {
  std::string session_create, session_id, ndjson;
  size_t events = 0;
};

Converted convert(const std::string &dir, const std::string &file) {
  std::string path = dir + "/convert.ctxdb";
  ctxdb_db *db = open_fresh(path);
  std::string opts = import_options(file);
  char *out = nullptr;
  size_t n = 0;
  call(ctxdb_transcript_import(db, opts.data(), opts.size(), &out, &n), db, &out, "import");
  ctxdb_iter *it = nullptr;
  check(ctxdb_events_iter(db, nullptr, 0, 1, -1, &it), db, "events");
  Converted c;
  simdjson::dom::parser parser;
  const char *row;
  size_t len;
  while (ctxdb_iter_next(it, &row, &len) == CTXDB_ROW) {
    simdjson::dom::element e = parser.parse(row, len);
    ctxdb::json::JsonWriter w(len);
    w.begin_object();
    if (c.session_id.empty()) { // SessionStarted: the session_create request
      c.session_id = std::string(e["session_id"].get_string().value());
      w.field("id", c.session_id).field("event_id", e["id"].get_string().value());
    } else {
      w.field("type", e["type"].get_string().value()).field("id", e["id"].get_string().value());
      if (std::string_view p; !e["parent_id"].get(p)) w.field("parent_id", p);
    }
    w.field("actor", e["actor"].get_string().value()).field("ts", e["ts"].get_int64().value());
    w.key("payload").element(e["payload"]).end_object();
    if (c.session_create.empty())
      c.session_create = w.take();
    else
      c.ndjson += w.take() + "\n";
    ++c.events;
  }
  ctxdb_iter_free(it);
  ctxdb_close(db);
  return c;
}

double time_import(const std::string &db_path, const std::string &file) {
  ctxdb_db *db = open_fresh(db_path);
  std::string opts = import_options(file);
  char *out = nullptr;
  size_t n = 0;
  Clock::time_point t0 = Clock::now();
  std::string report =
      call(ctxdb_transcript_import(db, opts.data(), opts.size(), &out, &n), db, &out, "import");
  check(ctxdb_close(db), nullptr, "close");
  double s = bench::seconds_since(t0);
  if (report.find("\"imported\":1") == std::string::npos)
    throw std::runtime_error("the import did not import: " + report);
  return s;
}

double time_append(const std::string &db_path, const Converted &c) {
  ctxdb_db *db = open_fresh(db_path);
  char *out = nullptr;
  size_t n = 0;
  Clock::time_point t0 = Clock::now();
  call(ctxdb_session_create(db, c.session_create.data(), c.session_create.size(), &out, &n), db,
       &out, "session_create");
  call(ctxdb_append_batch(db, c.session_id.data(), c.session_id.size(), c.ndjson.data(),
                          c.ndjson.size(), &out, &n),
       db, &out, "append_batch");
  check(ctxdb_close(db), nullptr, "close");
  return bench::seconds_since(t0);
}

std::string read_file(const char *path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// This process's peak RSS (KiB), from /proc/self/status.
long vm_hwm_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("VmHWM:")) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

// --child DB FILE import|append: in a process of its own, the import of a
// session file, or the append of what it converts to (FILE: the session
// id, the session_create JSON, then the events as NDJSON).
int child(const char *db_path, const char *file, const char *what) {
  ctxdb_db *db = open_fresh(db_path);
  char *out = nullptr;
  size_t n = 0;
  if (std::strcmp(what, "import") == 0) {
    std::string opts = import_options(file);
    call(ctxdb_transcript_import(db, opts.data(), opts.size(), &out, &n), db, &out, "import");
  } else {
    std::string text = read_file(file);
    size_t a = text.find('\n'), b = text.find('\n', a + 1);
    std::string_view all(text), sid = all.substr(0, a), create = all.substr(a + 1, b - a - 1);
    call(ctxdb_session_create(db, create.data(), create.size(), &out, &n), db, &out, "create");
    std::string_view events = all.substr(b + 1);
    call(ctxdb_append_batch(db, sid.data(), sid.size(), events.data(), events.size(), &out, &n), db,
         &out, "append_batch");
  }
  if (ctxdb_close(db) != CTXDB_OK) return 1;
  std::printf("%ld\n", vm_hwm_kib());
  return 0;
}

// The peak RSS (KiB) of a child doing `what`: its VmHWM, read by the
// child itself at its end. (wait4's ru_maxrss would not do: it keeps the
// RSS the process had before its exec, the parent's at the fork.)
long peak_kib(const char *self, const std::string &db_path, const std::string &file,
              const char *what) {
  std::string command =
      std::string("'") + self + "' --child '" + db_path + "' '" + file + "' " + what;
  std::FILE *p = popen(command.c_str(), "r");
  long kib = -1;
  if (!p || std::fscanf(p, "%ld", &kib) != 1) kib = -1;
  if (!p || pclose(p) != 0 || kib < 0)
    throw std::runtime_error(std::string("the ") + what + " child failed");
  return kib;
}

void write_file(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 5 && std::strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3], argv[4]);
  size_t mb = 32;
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--mb") == 0) mb = std::strtoul(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
  }
  try {
    char tmpl[] = "/tmp/ctxdb-bench-transcript-XXXXXX";
    std::string dir = mkdtemp(tmpl);
    std::string file = dir + "/session.jsonl", big = dir + "/big.jsonl";
    std::string text = pi_transcript(mb << 20);
    write_file(file, text);
    double file_mb = double(text.size()) / (1 << 20);
    Converted c = convert(dir, file);
    std::printf("bench_transcript_import (%s build): a Pi session of %.1f MB, %zu events "
                "(%.1f MB as NDJSON), %d rounds\n",
                CTXDB_BENCH_BUILD_TYPE, file_mb, c.events,
                double(c.ndjson.size() + c.session_create.size()) / (1 << 20), rounds);
    std::vector<double> import_s, append_s;
    for (int r = 0; r < rounds; ++r) {
      std::string db = dir + "/round.ctxdb";
      if (r % 2 == 0) {
        import_s.push_back(time_import(db, file));
        append_s.push_back(time_append(db, c));
      } else {
        append_s.push_back(time_append(db, c));
        import_s.push_back(time_import(db, file));
      }
    }
    double import_rate = file_mb / median(import_s), append_rate = file_mb / median(append_s);
    std::printf("  %-28s %8.1f MB/s  (median %.2f s)\n", "transcript_import", import_rate,
                median(import_s));
    std::printf("  %-28s %8.1f MB/s  (median %.2f s)\n", "append_batch, same events", append_rate,
                median(append_s));
    std::printf("  ratio import/append        %8.2f  (goal >= 0.5)\n", import_rate / append_rate);

    std::string big_text = pi_transcript((mb * 4) << 20);
    write_file(big, big_text);
    text.clear();
    text.shrink_to_fit();
    double big_mb = double(big_text.size()) / (1 << 20);
    big_text.clear();
    big_text.shrink_to_fit();
    // [size][0: import, 1: append of the same events]
    long kib[2][2];
    const std::string files[2] = {file, big};
    for (int k = 0; k < 2; ++k) {
      Converted events = k == 0 ? std::move(c) : convert(dir, big);
      std::string ndjson = dir + "/events.ndjson";
      write_file(ndjson, events.session_id + "\n" + events.session_create + "\n" + events.ndjson);
      events = Converted{};
      kib[k][0] = peak_kib(argv[0], dir + "/mem.ctxdb", files[k], "import");
      kib[k][1] = peak_kib(argv[0], dir + "/mem.ctxdb", ndjson, "append");
    }
    const double sizes[2] = {file_mb, big_mb};
    for (int k = 0; k < 2; ++k)
      std::printf("  peak RSS, %.1f MB file: import %.1f MB, append_batch of its events %.1f MB\n",
                  sizes[k], kib[k][0] / 1024.0, kib[k][1] / 1024.0);
    std::printf("{\"bench\":\"transcript_import\",\"file_mb\":%.2f,\"rounds\":%d,"
                "\"import_mb_s\":%.2f,\"append_mb_s\":%.2f,\"ratio\":%.3f,\"peak_rss_mb\":["
                "{\"file_mb\":%.1f,\"import\":%.1f,\"append\":%.1f},"
                "{\"file_mb\":%.1f,\"import\":%.1f,\"append\":%.1f}]}\n",
                file_mb, rounds, import_rate, append_rate, import_rate / append_rate, file_mb,
                kib[0][0] / 1024.0, kib[0][1] / 1024.0, big_mb, kib[1][0] / 1024.0,
                kib[1][1] / 1024.0);
    fs::remove_all(dir);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_transcript_import: %s\n", e.what());
    return 1;
  }
  return 0;
}
