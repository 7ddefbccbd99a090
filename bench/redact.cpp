// bench_redact: the redactor's built-in detectors over ~1 MB of realistic
// agent text — build logs, code, JSON tool output, prose — (a) with no
// secret, (b) the same with a secret every ~10 KB, side by side with the
// floor of any regex redaction in the same run: one PCRE2 JIT search for
// one literal (absent) over the same text. The figure is the ratio.
//
// The compiler redacts up to ~500 KB per compile inside a 2 ms budget, so
// the goal is >= 1000 MB/s on text without secrets.
//
// It links the engine directly (the redactor has no C ABI).
//
// usage: bench_redact [--kb N] [--rounds R]
#define PCRE2_CODE_UNIT_WIDTH 8
#include "bench_util.hpp"

#include "policy/redactor.hpp"

#include <pcre2.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using bench::Clock;
using bench::median;
using bench::seconds_since;
using ctxdb::policy::RedactionHit;
using ctxdb::policy::Redactor;

namespace {

std::string hex(std::mt19937_64 &rng, int n) {
  static const char *d = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < n; ++i) s += d[rng() % 16];
  return s;
}

// One line of what an agent's context holds, chosen at random: log lines
// with hashes and URLs, code that talks about tokens and passwords, JSON
// tool output, prose. Nothing here is a secret.
std::string line(std::mt19937_64 &rng) {
  static const char *code[] = {
      "    if (token == NULL) return parse_error(lexer, \"unexpected token\");\n",
      "    const token = lexer.next(); // advance past the separator\n",
      "def verify(user, password):\n    return check_hash(password_hash(password), user.pw)\n",
      "    let pwd = std::env::current_dir()?;\n",
      "    max_tokens: int = 4096  # the model's output budget\n",
      "    secret: SecretStr = Field(..., description=\"loaded from the vault\")\n",
      "    headers = {\"Authorization\": f\"Bearer {self.api_key}\"}\n",
      "  for (size_t i = 0; i < n; ++i) sum += values[i] * weights[i];\n"};
  static const char *prose[] = {
      "The build failed because the linker could not find the symbol; I will add the library "
      "to target_link_libraries and rebuild.\n",
      "Bearer tokens are sent in the Authorization header, so the proxy must not log headers.\n",
      "Next I will read the failing test, then run it alone with --verbose to see the diff.\n",
      "The user asked for the password reset flow to send an e-mail, not to show the token.\n"};
  switch (rng() % 6) {
  case 0:
    return "2026-03-14 10:" + std::to_string(10 + rng() % 50) +
           ":07.123 INFO request_id=" + hex(rng, 8) + "-" + hex(rng, 4) + "-4" + hex(rng, 3) +
           "-a" + hex(rng, 3) + "-" + hex(rng, 12) +
           " GET https://api.example.com/v1/items?page=" + std::to_string(rng() % 90) + " 200 " +
           std::to_string(rng() % 900) + "ms\n";
  case 1:
    return "commit " + hex(rng, 40) + "\nsha256:" + hex(rng, 64) + "  dist/app-" +
           std::to_string(rng() % 9) + ".tar.gz\n";
  case 2: return code[rng() % 8];
  case 3:
    return R"({"path":"src/module_)" + std::to_string(rng() % 300) + R"(.py","line":)" +
           std::to_string(rng() % 4000) + R"(,"tokens":)" + std::to_string(rng() % 9000) +
           R"(,"data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"},)" + "\n";
  case 4: return prose[rng() % 4];
  default:
    return "[ RUN      ] Compile.Case" + std::to_string(rng() % 3000) + "\n[       OK ] (" +
           std::to_string(rng() % 400) + " ms) see http://localhost:8080/status\n";
  }
}

std::string clean_text(size_t bytes) {
  std::mt19937_64 rng(42);
  std::string s;
  s.reserve(bytes + 256);
  while (s.size() < bytes) s += line(rng);
  return s;
}

// The same text with a secret line after the line that crosses each 10 KB.
std::string with_secrets(const std::string &clean, int &inserted) {
  static const char *secrets[] = {
      "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
      "export GITHUB_TOKEN=ghp_iK2ZWeqhFWCEPyYngFb51yBMWXaSCrUZoL8g\n",
      "DATABASE_URL=postgres://admin:s3cr3t@db.internal:5432/app\n",
      "curl -H 'Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543aZ' https://api.x.io\n",
      "OPENAI_API_KEY=sk-proj-UVl4nuYV_d8fNYvvDbzDZST6IaXqA2h9Uz0_T1SaQ6dDwxlG\n",
      "  \"password\": \"hunter2!\",\n"};
  std::string s;
  s.reserve(clean.size() + clean.size() / 100);
  inserted = 0;
  size_t next = 10000, at = 0;
  while (at < clean.size()) {
    size_t nl = clean.find('\n', at);
    nl = nl == std::string::npos ? clean.size() : nl + 1;
    s.append(clean, at, nl - at);
    at = nl;
    if (at >= next) {
      s += secrets[inserted++ % 6];
      next += 10000;
    }
  }
  return s;
}

// The floor: one JIT search of an absent literal over the whole text.
double literal_search_mbs(const std::string &text) {
  int err = 0;
  PCRE2_SIZE at = 0;
  const char *pattern = "FATAL: worker crashed";
  pcre2_code *code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &at, nullptr);
  if (!code || pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) != 0)
    throw std::runtime_error("baseline pattern did not JIT-compile");
  pcre2_match_data *md = pcre2_match_data_create(1, nullptr);
  auto t0 = Clock::now();
  int rc = pcre2_jit_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0, md,
                           nullptr);
  double mbs = double(text.size()) / 1e6 / seconds_since(t0);
  pcre2_match_data_free(md);
  pcre2_code_free(code);
  if (rc != PCRE2_ERROR_NOMATCH) throw std::runtime_error("baseline literal found");
  return mbs;
}

struct Figures {
  double redact = 0, floor = 0;
  int64_t hits = 0;
};

// Medians over rounds; each round redacts a fresh copy (copied untimed).
Figures measure(const Redactor &r, const std::string &text, int rounds) {
  std::vector<double> red, flo;
  Figures f;
  for (int i = 0; i < rounds; ++i) {
    flo.push_back(literal_search_mbs(text));
    std::string copy = text;
    std::vector<RedactionHit> hits;
    auto t0 = Clock::now();
    r.redact(copy, hits);
    red.push_back(double(text.size()) / 1e6 / seconds_since(t0));
    f.hits = 0;
    for (const RedactionHit &h : hits) f.hits += h.count;
  }
  f.redact = median(red);
  f.floor = median(flo);
  return f;
}

void report(const char *name, size_t bytes, const Figures &f) {
  std::printf("%-28s %10.0f %12.0f %8.2f %6lld %10.3f\n", name, f.redact, f.floor,
              f.redact / f.floor, (long long)f.hits, 0.5 / f.redact * 1e3);
  std::printf("{\"bench\":\"redact\",\"data\":\"%s\",\"bytes\":%zu,\"redact_mbs\":%.1f,"
              "\"literal_search_mbs\":%.1f,\"ratio\":%.3f,\"hits\":%lld}\n",
              name, bytes, f.redact, f.floor, f.redact / f.floor, (long long)f.hits);
}

} // namespace

int main(int argc, char **argv) {
  size_t kb = 1024;
  int rounds = 15;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--kb") && i + 1 < argc)
      kb = std::strtoull(argv[++i], 0, 10);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_redact [--kb N] [--rounds R]\n");
      return 2;
    }
  }
  try {
    Redactor r({}, true);
    std::string clean = clean_text(kb << 10);
    int inserted = 0;
    std::string dirty = with_secrets(clean, inserted);
    std::printf("bench_redact (%s build): %zu KB, %d rounds, medians; built-in detectors\n",
                CTXDB_BENCH_BUILD_TYPE, kb, rounds);
    std::printf("%-28s %10s %12s %8s %6s %10s\n", "", "MB/s", "literal MB/s", "ratio", "hits",
                "ms/500KB");
    Figures a = measure(r, clean, rounds), b = measure(r, dirty, rounds);
    report("no secrets", clean.size(), a);
    report("a secret every ~10 KB", dirty.size(), b);
    std::printf("goal >= 1000 MB/s without secrets: %s; secrets found %lld of %d inserted\n",
                a.redact >= 1000 ? "met" : "NOT met", (long long)b.hits, inserted);
    if (a.hits != 0 || b.hits != inserted) throw std::runtime_error("unexpected hit count");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_redact: %s\n", e.what());
    return 1;
  }
  return 0;
}
