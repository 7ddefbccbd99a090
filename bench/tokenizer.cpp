// bench_tokenizer: exact token counts through the C ABI (ctxdb_tokens_count
// and ctxdb_tokens_encode, one thread) on a 10 MB mixed corpus, side by
// side in the same run with npm tiktoken (WASM) and gpt-tokenizer (pure
// JS) from Node on the same bytes (bench/tokenizer/peers.mjs); medians of
// the passes, and ratios.
//
// The corpus: paragraphs (blank-line separated blocks) of
// bench/tokens/corpus -- English, Chinese, Japanese, mixed, C++, Python,
// JSON tool output, build logs, shell output, markdown -- drawn by a seeded
// generator until 10 MB, written to --out for the peers.
//
// usage: bench_tokenizer [--root DIR] [--encoding E] [--rounds R] [--mb N]
//                        [--out FILE] [--no-peers]
// The rank files: CTXDB_TOKENIZER_DATA, else the copy scripts/setup.sh
// installs in tests/fixtures/bpe. The peers: `npm ci` in bench/tokenizer.
#include "bench_util.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using bench::Clock;
using bench::median;
using bench::seconds_since;

namespace {

std::string read_file(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string make_corpus(const std::filesystem::path &root, size_t bytes) {
  std::vector<std::string> paragraphs;
  std::vector<std::filesystem::path> files;
  for (const auto &f : std::filesystem::directory_iterator(root / "bench/tokens/corpus"))
    files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto &f : files) {
    std::string text = read_file(f);
    for (size_t at = 0; at < text.size();) {
      size_t end = text.find("\n\n", at);
      end = end == std::string::npos ? text.size() : end + 2;
      paragraphs.push_back(text.substr(at, end - at));
      at = end;
    }
  }
  std::mt19937_64 rng(20260512);
  std::string out;
  while (out.size() < bytes) out += paragraphs[rng() % paragraphs.size()];
  return out;
}

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// MB/s over the CPU time the process spent (the figure a shared machine
// does not distort) and over wall time.
struct Rate {
  double cpu = 0, wall = 0;
};

// Median rates of `rounds` passes of fn over text (after one warm-up pass,
// which also loads the encoding); *tokens gets what fn returned.
template <class Fn> Rate mb_per_s(const std::string &text, int rounds, int64_t *tokens, Fn fn) {
  *tokens = fn();
  std::vector<double> cpu, wall;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = Clock::now();
    double c0 = cpu_seconds();
    *tokens = fn();
    cpu.push_back(double(text.size()) / (cpu_seconds() - c0) / 1e6);
    wall.push_back(double(text.size()) / seconds_since(t0) / 1e6);
  }
  return {median(cpu), median(wall)};
}

// The value of "key": {"cpu_mb_s": X, "wall_mb_s": Y, "tokens": N} in the
// peers' JSON line.
bool peer(const std::string &json, const std::string &key, Rate *rate, int64_t *tokens) {
  size_t at = json.find("\"" + key + "\"");
  if (at == std::string::npos) return false;
  size_t c = json.find("\"cpu_mb_s\":", at), w = json.find("\"wall_mb_s\":", at),
         t = json.find("\"tokens\":", at);
  if (c == std::string::npos || w == std::string::npos || t == std::string::npos) return false;
  rate->cpu = std::strtod(json.c_str() + c + 11, nullptr);
  rate->wall = std::strtod(json.c_str() + w + 12, nullptr);
  *tokens = std::strtoll(json.c_str() + t + 9, nullptr, 10);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::filesystem::path root = CTXDB_SOURCE_DIR;
  std::string encoding = "o200k_base";
  std::string out_file = (std::filesystem::temp_directory_path() / "ctxdb_bench_tokenizer.txt");
  int rounds = 5;
  double mb = 10;
  bool peers = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--root" && i + 1 < argc)
      root = argv[++i];
    else if (a == "--encoding" && i + 1 < argc)
      encoding = argv[++i];
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (a == "--mb" && i + 1 < argc)
      mb = std::atof(argv[++i]);
    else if (a == "--out" && i + 1 < argc)
      out_file = argv[++i];
    else if (a == "--no-peers")
      peers = false;
    else {
      std::fprintf(stderr,
                   "usage: %s [--root DIR] [--encoding E] [--rounds R] [--mb N] [--out FILE] "
                   "[--no-peers]\n",
                   argv[0]);
      return 2;
    }
  }
  if (!std::getenv("CTXDB_TOKENIZER_DATA"))
    setenv("CTXDB_TOKENIZER_DATA",
           (root / "tests/fixtures/bpe/node_modules/gpt-tokenizer/data").c_str(), 1);

  std::string text = make_corpus(root, size_t(mb * 1e6));
  std::ofstream(out_file, std::ios::binary) << text;
  std::printf("bench_tokenizer (%s build): %s, %.1f MB mixed corpus, %d rounds, one thread\n",
              CTXDB_BENCH_BUILD_TYPE, encoding.c_str(), text.size() / 1e6, rounds);

  int64_t count_tokens = 0, encode_tokens = 0;
  Rate count_rate = mb_per_s(text, rounds, &count_tokens, [&] {
    int64_t n = 0;
    bench::check(ctxdb_tokens_count(nullptr, encoding.data(), encoding.size(), text.data(),
                                    text.size(), CTXDB_SPECIALS_TEXT, &n),
                 nullptr, "ctxdb_tokens_count");
    return n;
  });
  Rate encode_rate = mb_per_s(text, rounds, &encode_tokens, [&] {
    uint32_t *ids = nullptr;
    size_t n = 0;
    bench::check(ctxdb_tokens_encode(nullptr, encoding.data(), encoding.size(), text.data(),
                                     text.size(), CTXDB_SPECIALS_TEXT, &ids, &n),
                 nullptr, "ctxdb_tokens_encode");
    ctxdb_free(ids);
    return int64_t(n);
  });

  std::printf("\n  %-36s %9s %9s %10s %9s\n", "tokenizer", "MB/s cpu", "MB/s wall", "tokens",
              "ctxdb is");
  auto row = [](const char *label, Rate r, int64_t tokens, const char *ratio) {
    std::printf("  %-36s %9.1f %9.1f %10lld %9s", label, r.cpu, r.wall, (long long)tokens, ratio);
  };
  row("ctxdb count (ctxdb_tokens_count)", count_rate, count_tokens, "");
  std::printf("\n");
  row("ctxdb encode (ctxdb_tokens_encode)", encode_rate, encode_tokens, "");
  std::printf("\n");
  std::string json;
  if (peers) {
    std::string cmd = "node " + (root / "bench/tokenizer/peers.mjs").string() + " " + out_file +
                      " " + encoding + " " + std::to_string(rounds);
    if (FILE *p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      while (std::fgets(buf, sizeof buf, p)) json += buf;
      pclose(p);
    }
    struct Row {
      const char *key, *label;
      Rate ctxdb;
    } rows[] = {{"tiktoken_encode", "tiktoken WASM encode (count = len)", count_rate},
                {"gpt_tokenizer_count", "gpt-tokenizer countTokens", count_rate},
                {"gpt_tokenizer_encode", "gpt-tokenizer encode", encode_rate}};
    for (const Row &r : rows) {
      Rate rate;
      int64_t tokens = 0;
      if (!peer(json, r.key, &rate, &tokens)) {
        std::printf("  %-36s (not run: npm ci in bench/tokenizer)\n", r.label);
        continue;
      }
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.1fx", r.ctxdb.cpu / rate.cpu);
      row(r.label, rate, tokens, ratio);
      std::printf("%s\n", tokens == count_tokens ? "" : "  TOKEN COUNT DIFFERS");
    }
    std::printf("  (ctxdb is: ctxdb count over a peer's count, encode over encode, CPU time)\n");
  }
  std::printf("{\"bench\":\"tokenizer\",\"encoding\":\"%s\",\"bytes\":%zu,\"tokens\":%lld,"
              "\"ctxdb_count\":{\"cpu_mb_s\":%.2f,\"wall_mb_s\":%.2f},"
              "\"ctxdb_encode\":{\"cpu_mb_s\":%.2f,\"wall_mb_s\":%.2f},\"peers\":%s}\n",
              encoding.c_str(), text.size(), (long long)count_tokens, count_rate.cpu,
              count_rate.wall, encode_rate.cpu, encode_rate.wall,
              json.empty() ? "null" : json.substr(0, json.find_last_not_of("\n") + 1).c_str());
  return count_tokens == encode_tokens ? 0 : 1;
}
