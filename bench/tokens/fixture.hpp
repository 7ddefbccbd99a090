// fixture.hpp — the token-estimator corpus with its exact o200k counts
// (tests/fixtures/tokens/o200k_counts.json, written by exact.mjs), and the
// error measures bench_tokens prints and tests/engine/token_test.cpp
// bounds, so both read and score the chunks the same way.
#pragma once

#include <simdjson.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tokens_fixture {

// One message-sized piece of a corpus file; `kind` is the file's stem.
struct Chunk {
  std::string kind;
  std::string_view text;
  int64_t exact = 0;
};

struct Corpus {
  std::map<std::string, std::string> files; // name -> content (chunks view it)
  std::vector<std::string> kinds;           // in fixture order
  std::vector<Chunk> chunks;
};

inline std::string read_file(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Reads the fixture and the corpus files it names from the repository root.
inline Corpus load(const std::filesystem::path &root) {
  Corpus c;
  simdjson::dom::parser parser;
  simdjson::dom::element doc =
      parser.parse(read_file(root / "tests/fixtures/tokens/o200k_counts.json"));
  for (simdjson::dom::element f : doc["files"].get_array()) {
    std::string name(f["file"].get_string().value());
    std::string &text = c.files[name] = read_file(root / "bench/tokens/corpus" / name);
    if (int64_t(text.size()) != f["bytes"].get_int64().value())
      throw std::runtime_error(name + " changed since its exact counts were taken (exact.mjs)");
    std::string kind = std::filesystem::path(name).stem().string();
    c.kinds.push_back(kind);
    for (simdjson::dom::element ch : f["chunks"].get_array()) {
      size_t start = size_t(ch["start"].get_int64().value());
      size_t end = size_t(ch["end"].get_int64().value());
      c.chunks.push_back({kind, std::string_view(text).substr(start, end - start),
                          ch["tokens"].get_int64().value()});
    }
  }
  return c;
}

// The usual rule of thumb, on Unicode characters (not bytes).
inline int64_t chars_over_4(std::string_view s) {
  int64_t chars = 0;
  for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
  return (chars + 2) / 4;
}

// Relative errors of an estimate over a kind's chunks: the mean of
// (estimate - exact) / exact (bias) and of its absolute value.
struct Error {
  int64_t exact = 0, estimate = 0;
  double mean_signed = 0, mean_abs = 0;
  int chunks = 0;
};

template <class Estimate>
std::map<std::string, Error> errors(const Corpus &c, Estimate estimate) {
  std::map<std::string, Error> by_kind;
  for (const Chunk &ch : c.chunks) {
    Error &e = by_kind[ch.kind];
    int64_t est = estimate(ch.text);
    double rel = double(est - ch.exact) / double(ch.exact);
    e.exact += ch.exact;
    e.estimate += est;
    e.mean_signed += rel;
    e.mean_abs += std::fabs(rel);
    ++e.chunks;
  }
  for (auto &[kind, e] : by_kind) {
    e.mean_signed /= e.chunks;
    e.mean_abs /= e.chunks;
  }
  return by_kind;
}

} // namespace tokens_fixture
