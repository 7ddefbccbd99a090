// bench_artifacts: the artifact store's put, get, grep and verify throughput on
// realistic content generated in-process — a build/test log and JSON tool
// output — side by side with the floor of any such store: raw zstd
// compressing and decompressing the same 256 KiB chunks at the same level
// in memory, in the same run (the same chunking: each chunk its own frame,
// as the store keeps them). Also the stored size over the raw size. verify
// is set beside the same work on the in-memory frames: SHA-256 of every
// frame (quick), and that plus decompressing every frame and hashing the
// whole content (full).
//
// It links the engine directly: the store without the C ABI around it.
//
// usage: bench_artifacts [--log-mb N] [--rounds R] [--quick]
#include "bench_util.hpp"

#include "artifact/artifact_store.hpp"
#include "artifact/search.hpp"
#include "artifact/verify.hpp"
#include "store/store.hpp"
#include "util/sha256.hpp"

#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using bench::Clock;
using bench::median;
using bench::seconds_since;
using namespace ctxdb;

namespace {

constexpr size_t kChunk = 256 * 1024;
constexpr int kLevel = 3;
constexpr const char *kRare = "FATAL: worker 7 crashed: SIGSEGV in ld.so";

std::string hex(std::mt19937_64 &rng, int n) {
  static const char *d = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < n; ++i) s += d[rng() % 16];
  return s;
}

// A CI log: compile steps, warnings with paths, test runs with timings,
// timestamps and hashes (so it does not compress to nothing), and the
// rare fatal line twice: half way, and nine tenths in (not in a tail).
std::string build_log(size_t bytes) {
  std::mt19937_64 rng(42);
  static const char *dirs[] = {"engine/log", "engine/project", "capi", "bindings/cli",
                               "tests/capi"};
  static const char *suites[] = {"EventLog", "Projection", "Compile", "Artifacts", "Tree"};
  std::string s;
  s.reserve(bytes + 256);
  size_t step = 0, next_rare = bytes / 2;
  while (s.size() < bytes) {
    ++step;
    char ts[32];
    std::snprintf(ts, sizeof ts, "2026-03-%02d %02d:%02d:%02d.%03d ", int(1 + step / 900000 % 28),
                  int(step / 36000 % 24), int(step / 600 % 60), int(step / 10 % 60),
                  int(rng() % 1000));
    s += ts;
    switch (rng() % 8) {
    case 0:
    case 1:
      s += "[" + std::to_string(step % 100) + "%] Building CXX object " + dirs[rng() % 5] +
           "/file_" + std::to_string(rng() % 500) + ".cpp.o\n";
      break;
    case 2:
      s += std::string(dirs[rng() % 5]) + "/file_" + std::to_string(rng() % 500) +
           ".cpp:" + std::to_string(rng() % 900) + ":" + std::to_string(rng() % 80) +
           ": warning: unused variable 'tmp" + std::to_string(rng() % 50) +
           "' [-Wunused-variable]\n";
      break;
    case 3:
      s += "[ RUN      ] " + std::string(suites[rng() % 5]) + ".Case" +
           std::to_string(rng() % 3000) + "\n";
      break;
    case 4:
      s += "[       OK ] " + std::string(suites[rng() % 5]) + ".Case" +
           std::to_string(rng() % 3000) + " (" + std::to_string(rng() % 400) + " ms)\n";
      break;
    case 5: s += "cache hit " + hex(rng, 16) + " -> " + hex(rng, 40) + "\n"; break;
    case 6:
      s += "  in function 'ctxdb::log::EventLog::append' at event_log.cpp:" +
           std::to_string(rng() % 900) + "\n";
      break;
    default:
      s += "downloaded " + std::to_string(rng() % 100000) + " bytes in " +
           std::to_string(rng() % 900) + " ms\n";
      break;
    }
    if (s.size() >= next_rare) {
      s += std::string(kRare) + "\n";
      next_rare = next_rare < bytes * 9 / 10 ? bytes * 9 / 10 : SIZE_MAX;
    }
  }
  return s;
}

// Tool output as an agent sees it: a JSON array of search hits.
std::string json_output(size_t bytes) {
  std::mt19937_64 rng(7);
  std::string s = "[";
  for (size_t i = 0; s.size() < bytes; ++i) {
    if (i) s += ",\n";
    s += R"({"path":"src/module_)" + std::to_string(rng() % 300) + "/file_" +
         std::to_string(rng() % 90) + R"(.py","line":)" + std::to_string(rng() % 4000) +
         R"(,"score":0.)" + std::to_string(rng() % 1000000) + R"(,"sha":")" + hex(rng, 12) +
         R"(","text":"def handler_)" + std::to_string(rng() % 10000) +
         R"((request, ctx): return ctx.reply(status=)" + std::to_string(200 + rng() % 300) + ")\"}";
  }
  return s + "]\n";
}

struct Figures {
  double put = 0, raw_compress = 0, get = 0, scan = 0, raw_decompress = 0, raw_whole = 0, grep = 0;
  double verify_quick = 0, raw_hash = 0, verify_full = 0, raw_check = 0;
  double stored_ratio = 0, raw_ratio = 0;
};

// The floor of verify on the frames in memory, MB/s of raw bytes: quick
// hashes every frame; full also decompresses each and hashes the content.
void raw_verify(const std::vector<std::string> &frames, size_t raw_bytes, double &quick_mbs,
                double &full_mbs) {
  util::Sha256 frame_hash, content;
  util::Digest sink{};
  auto t0 = Clock::now();
  for (const std::string &f : frames) sink[0] ^= frame_hash.update(f).finish()[0];
  quick_mbs = double(raw_bytes) / 1e6 / seconds_since(t0);
  ZSTD_DCtx *d = ZSTD_createDCtx();
  std::string out(kChunk, '\0');
  t0 = Clock::now();
  for (const std::string &f : frames) {
    sink[0] ^= frame_hash.update(f).finish()[0];
    size_t n = ZSTD_decompressDCtx(d, out.data(), out.size(), f.data(), f.size());
    if (ZSTD_isError(n)) throw std::runtime_error("zstd decompress");
    content.update(out.data(), n);
  }
  sink[1] ^= content.finish()[0];
  full_mbs = double(raw_bytes) / 1e6 / seconds_since(t0);
  ZSTD_freeDCtx(d);
  if (sink[0] == 0 && sink[1] == 0) std::printf(" "); // keeps the hashing
}

// Raw zstd on the same chunks: the floor for put (compress) and get
// (decompress), returning MB/s of raw bytes. Compression goes through one
// reused output buffer, each frame then kept at its size (as a store must
// keep it); decompression into one reused chunk buffer is the floor of the
// streaming get, and into one fresh malloc'd buffer of the whole size that
// of a whole get (which also pays for the buffer's pages).
void raw_zstd(const std::string &data, double &compress_mbs, double &decompress_mbs,
              double &decompress_whole_mbs, double &ratio, double &hash_mbs, double &check_mbs) {
  ZSTD_CCtx *c = ZSTD_createCCtx();
  ZSTD_DCtx *d = ZSTD_createDCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, kLevel);
  std::vector<std::string> frames;
  std::unique_ptr<char[]> buf(new char[ZSTD_compressBound(kChunk)]);
  auto t0 = Clock::now();
  size_t stored = 0;
  for (size_t at = 0; at < data.size(); at += kChunk) {
    size_t n = std::min(kChunk, data.size() - at);
    size_t z = ZSTD_compress2(c, buf.get(), ZSTD_compressBound(kChunk), data.data() + at, n);
    if (ZSTD_isError(z)) throw std::runtime_error("zstd compress");
    stored += z;
    frames.emplace_back(buf.get(), z);
  }
  compress_mbs = double(data.size()) / 1e6 / seconds_since(t0);
  std::string out(kChunk, '\0');
  size_t total = 0;
  t0 = Clock::now();
  for (const std::string &f : frames) {
    size_t n = ZSTD_decompressDCtx(d, out.data(), out.size(), f.data(), f.size());
    if (ZSTD_isError(n)) throw std::runtime_error("zstd decompress");
    total += n;
  }
  decompress_mbs = double(total) / 1e6 / seconds_since(t0);
  t0 = Clock::now();
  std::unique_ptr<char, decltype(&std::free)> whole(static_cast<char *>(std::malloc(data.size())),
                                                    &std::free);
  total = 0;
  for (const std::string &f : frames) {
    size_t n = ZSTD_decompressDCtx(d, whole.get() + total, data.size() - total, f.data(), f.size());
    if (ZSTD_isError(n)) throw std::runtime_error("zstd decompress");
    total += n;
  }
  decompress_whole_mbs = double(total) / 1e6 / seconds_since(t0);
  if (total != data.size() || std::memcmp(whole.get(), data.data(), total) != 0)
    throw std::runtime_error("zstd gave other bytes");
  ratio = double(stored) / double(data.size());
  ZSTD_freeCCtx(c);
  ZSTD_freeDCtx(d);
  raw_verify(frames, data.size(), hash_mbs, check_mbs);
}

Figures measure(const fs::path &dir, const std::string &name, const std::string &data, int rounds,
                bool grep) {
  std::vector<double> put, rc, get, scan, rd, rw, gr, vq, rh, vf, rv;
  Figures f;
  for (int r = 0; r < rounds; ++r) {
    double c = 0, d = 0, w = 0, h = 0, v = 0;
    raw_zstd(data, c, d, w, f.raw_ratio, h, v);
    rc.push_back(c);
    rd.push_back(d);
    rw.push_back(w);
    rh.push_back(h);
    rv.push_back(v);
    // A fresh file per round: a second put of the same bytes is a dedupe.
    fs::path file = dir / (name + std::to_string(r) + ".ctxdb");
    {
      store::Store st(file.string(), {});
      artifact::ArtifactStore art(st);
      artifact::Meta meta;
      auto t0 = Clock::now();
      std::string id = art.put(data, meta);
      put.push_back(double(data.size()) / 1e6 / seconds_since(t0));
      // The whole content into one malloc'd buffer, as ctxdb_artifact_read
      // hands it to the caller.
      t0 = Clock::now();
      std::unique_ptr<char, decltype(&std::free)> back(nullptr, &std::free);
      size_t got = art.read_range_into(id, 0, INT64_MAX, [&](size_t n) {
        back.reset(static_cast<char *>(std::malloc(n)));
        return back.get();
      });
      get.push_back(double(data.size()) / 1e6 / seconds_since(t0));
      if (got != data.size() || std::memcmp(back.get(), data.data(), got) != 0)
        throw std::runtime_error("read back other bytes");
      back.reset();
      // The streaming reader: one reused chunk buffer, as raw zstd has.
      artifact::Layout layout = art.layout(id);
      size_t seen = 0;
      t0 = Clock::now();
      art.scan(layout, 0, INT64_MAX, [&](std::string_view piece) {
        seen += piece.size();
        return true;
      });
      scan.push_back(double(data.size()) / 1e6 / seconds_since(t0));
      if (seen != data.size()) throw std::runtime_error("scan saw other bytes");
      for (auto [mode, out] : {std::pair{artifact::VerifyMode::kQuick, &vq},
                               std::pair{artifact::VerifyMode::kFull, &vf}}) {
        t0 = Clock::now();
        artifact::VerifyReport v = artifact::verify_artifacts(st, mode);
        out->push_back(double(data.size()) / 1e6 / seconds_since(t0));
        if (!v.ok) throw std::runtime_error("verify: " + v.problem);
      }
      artifact::Info info = art.info(id);
      f.stored_ratio = double(info.stored_size) / double(info.raw_size);
      if (grep) {
        artifact::SearchOptions o;
        o.before = 2;
        o.after = 2;
        t0 = Clock::now();
        artifact::SearchResult res = artifact::search(art, id, "FATAL: worker \\d+ crashed", o);
        gr.push_back(double(data.size()) / 1e6 / seconds_since(t0));
        if (res.matches.size() != 2)
          throw std::runtime_error("grep found " + std::to_string(res.matches.size()) + " lines");
      }
    }
    fs::remove(file);
    fs::remove(file.string() + "-wal");
    fs::remove(file.string() + "-shm");
  }
  f.put = median(put);
  f.raw_compress = median(rc);
  f.get = median(get);
  f.scan = median(scan);
  f.raw_decompress = median(rd);
  f.raw_whole = median(rw);
  if (grep) f.grep = median(gr);
  f.verify_quick = median(vq);
  f.raw_hash = median(rh);
  f.verify_full = median(vf);
  f.raw_check = median(rv);
  return f;
}

void report(const char *name, size_t bytes, int rounds, const Figures &f, bool grep) {
  std::printf("\n%s: %.1f MB, %d rounds, medians (MB/s of raw bytes)\n", name, double(bytes) / 1e6,
              rounds);
  std::printf("%-34s %10s %10s %8s\n", "", "ctxdb", "raw zstd", "ratio");
  std::printf("%-34s %10.0f %10.0f %8.2f\n", "put (hash, compress, insert)", f.put, f.raw_compress,
              f.put / f.raw_compress);
  std::printf("%-34s %10.0f %10.0f %8.2f\n", "get whole (into one malloc'd buffer)", f.get,
              f.raw_whole, f.get / f.raw_whole);
  std::printf("%-34s %10.0f %10.0f %8.2f\n", "get streaming (scan, chunk buffer)", f.scan,
              f.raw_decompress, f.scan / f.raw_decompress);
  std::printf("%-34s %10.0f %10.0f %8.2f\n", "verify quick (SHA-256 of frames)", f.verify_quick,
              f.raw_hash, f.verify_quick / f.raw_hash);
  std::printf("%-34s %10.0f %10.0f %8.2f\n", "verify full (+ decompress, content)", f.verify_full,
              f.raw_check, f.verify_full / f.raw_check);
  if (grep) std::printf("%-34s %10.0f\n", "grep (rare pattern, 2+2 context)", f.grep);
  std::printf("stored/raw: ctxdb %.4f, raw zstd %.4f\n", f.stored_ratio, f.raw_ratio);
  std::printf("goals: put >= 0.8 of raw: %s; get >= 0.8 of raw: %s",
              f.put / f.raw_compress >= 0.8 ? "met" : "NOT met",
              std::min(f.get / f.raw_whole, f.scan / f.raw_decompress) >= 0.8 ? "met" : "NOT met");
  if (grep) std::printf("; grep >= 300 MB/s: %s", f.grep >= 300 ? "met" : "NOT met");
  std::printf("\n{\"bench\":\"artifacts\",\"data\":\"%s\",\"bytes\":%zu,\"rounds\":%d,"
              "\"put_mbs\":%.1f,\"raw_compress_mbs\":%.1f,\"get_mbs\":%.1f,"
              "\"scan_mbs\":%.1f,\"raw_decompress_mbs\":%.1f,\"raw_decompress_whole_mbs\":%.1f,"
              "\"grep_mbs\":%.1f,\"verify_quick_mbs\":%.1f,\"raw_sha256_mbs\":%.1f,"
              "\"verify_full_mbs\":%.1f,\"raw_check_mbs\":%.1f,"
              "\"stored_ratio\":%.4f,\"raw_zstd_ratio\":%.4f}\n",
              name, bytes, rounds, f.put, f.raw_compress, f.get, f.scan, f.raw_decompress,
              f.raw_whole, f.grep, f.verify_quick, f.raw_hash, f.verify_full, f.raw_check,
              f.stored_ratio, f.raw_ratio);
}

} // namespace

int main(int argc, char **argv) {
  size_t log_mb = 100;
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--log-mb") && i + 1 < argc)
      log_mb = std::strtoull(argv[++i], 0, 10);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick"))
      log_mb = 16, rounds = 3;
    else {
      std::fprintf(stderr, "usage: bench_artifacts [--log-mb N] [--rounds R] [--quick]\n");
      return 2;
    }
  }
  fs::path dir = fs::temp_directory_path() / ("ctxdb-bench-artifacts-" + std::to_string(getpid()));
  fs::create_directories(dir);
  try {
    std::printf("bench_artifacts (%s build): chunks of %zu KiB, zstd level %d\n",
                CTXDB_BENCH_BUILD_TYPE, kChunk / 1024, kLevel);
    std::string log = build_log(log_mb << 20);
    report("build_log", log.size(), rounds, measure(dir, "log", log, rounds, true), true);
    std::string json = json_output((log_mb << 20) / 5);
    report("json_tool_output", json.size(), rounds, measure(dir, "json", json, rounds, false),
           false);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_artifacts: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  return 0;
}
