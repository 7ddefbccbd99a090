// bench_tokens: the token estimator against exact o200k counts, per text
// kind of bench/tokens/corpus (chunks of 1-4 KB, counts from
// tests/fixtures/tokens/o200k_counts.json), side by side with chars/4; and
// its throughput against chars/4 on the same bytes, in the same run.
//
// usage: bench_tokens [--root DIR] [--rounds R] [--features]
//   --root      the repository (default: the source tree it was built from)
//   --features  print each chunk's feature counts as CSV (bench/tokens/fit.py
//               reads it) instead of the report
#include "bench_util.hpp"
#include "tokens/fixture.hpp"

#include "token/counter.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using bench::Clock;
using bench::median;
using bench::seconds_since;
using ctxdb::token::ApproxCounter;

namespace {

void print_features(const tokens_fixture::Corpus &c) {
  std::printf("kind,exact");
  for (std::string_view n : ApproxCounter::feature_names())
    std::printf(",%.*s", int(n.size()), n.data());
  std::printf("\n");
  for (const auto &ch : c.chunks) {
    std::printf("%s,%lld", ch.kind.c_str(), (long long)ch.exact);
    for (int64_t v : ApproxCounter::features(ch.text)) std::printf(",%lld", (long long)v);
    std::printf("\n");
  }
}

// MB/s of `count` over `text`: the median of `rounds` timed passes, each
// long enough (>= 20 ms) for the clock.
template <class Count> double mb_per_s(const std::string &text, int rounds, Count count) {
  int64_t sink = 0;
  int reps = 1;
  for (;;) {
    auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) sink += count(text);
    if (seconds_since(t0) >= 0.02) break;
    reps *= 2;
  }
  std::vector<double> rates;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) sink += count(text);
    rates.push_back(double(text.size()) * reps / seconds_since(t0) / 1e6);
  }
  if (sink == 42) std::printf(" ");
  return median(rates);
}

} // namespace

int main(int argc, char **argv) {
  std::string root = CTXDB_SOURCE_DIR;
  int rounds = 7;
  bool features = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--root") && i + 1 < argc)
      root = argv[++i];
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--features"))
      features = true;
    else {
      std::fprintf(stderr, "usage: %s [--root DIR] [--rounds R] [--features]\n", argv[0]);
      return 2;
    }
  }
  tokens_fixture::Corpus corpus = tokens_fixture::load(root);
  if (features) {
    print_features(corpus);
    return 0;
  }

  ApproxCounter approx;
  auto v2 = tokens_fixture::errors(corpus, [&](std::string_view s) { return approx.count(s); });
  auto c4 = tokens_fixture::errors(corpus, tokens_fixture::chars_over_4);
  std::printf("bench_tokens (%s build): %zu chunks of bench/tokens/corpus vs exact o200k\n\n",
              CTXDB_BENCH_BUILD_TYPE, corpus.chunks.size());
  std::printf("%-18s %6s %8s | %8s %8s %8s | %8s %8s %8s\n", "kind", "chunks", "exact", "approx",
              "signed", "abs", "chars/4", "signed", "abs");
  for (const std::string &kind : corpus.kinds) {
    const auto &a = v2[kind], &b = c4[kind];
    std::printf("%-18s %6d %8lld | %8lld %+7.1f%% %7.1f%% | %8lld %+7.1f%% %7.1f%%\n", kind.c_str(),
                a.chunks, (long long)a.exact, (long long)a.estimate, 100 * a.mean_signed,
                100 * a.mean_abs, (long long)b.estimate, 100 * b.mean_signed, 100 * b.mean_abs);
    std::printf("{\"bench\":\"tokens\",\"kind\":\"%s\",\"chunks\":%d,\"exact\":%lld,"
                "\"approx\":%lld,\"approx_signed\":%.4f,\"approx_abs\":%.4f,"
                "\"chars4\":%lld,\"chars4_signed\":%.4f,\"chars4_abs\":%.4f}\n",
                kind.c_str(), a.chunks, (long long)a.exact, (long long)a.estimate, a.mean_signed,
                a.mean_abs, (long long)b.estimate, b.mean_signed, b.mean_abs);
  }

  // Throughput on the whole corpus, and on its ASCII-only and CJK files
  // apart: CJK takes the byte-at-a-time path.
  std::string all, ascii, cjk;
  for (const auto &[name, text] : corpus.files) {
    all += text;
    bool has_high = false;
    for (unsigned char c : text) has_high |= c >= 0x80;
    if (name == "chinese.txt" || name == "japanese.txt")
      cjk += text;
    else if (!has_high)
      ascii += text;
  }
  std::printf("\nthroughput, median of %d rounds (MB/s)\n", rounds);
  std::printf("%-26s %9s %9s %7s\n", "text", "approx-v2", "chars/4", "ratio");
  for (auto [label, text] : {std::pair<const char *, const std::string *>{"corpus", &all},
                             {"ASCII-only files", &ascii},
                             {"chinese + japanese", &cjk}}) {
    double a = mb_per_s(*text, rounds, [&](const std::string &s) { return approx.count(s); });
    double b = mb_per_s(*text, rounds, tokens_fixture::chars_over_4);
    std::printf("%-26s %9.0f %9.0f %7.2f\n", label, a, b, a / b);
    std::printf("{\"bench\":\"tokens_throughput\",\"text\":\"%s\",\"bytes\":%zu,"
                "\"approx_mb_s\":%.1f,\"chars4_mb_s\":%.1f}\n",
                label, text->size(), a, b);
  }
  return 0;
}
