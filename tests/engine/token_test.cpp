// The approximate token counter: its rules, and that the 64-byte vector
// path and the byte-at-a-time tail agree wherever a run crosses a chunk.
#include "token/counter.hpp"

#include <doctest/doctest.h>

#include <string>

using ctxdb::token::default_counter;

namespace {
int64_t count(const std::string &s) { return default_counter().count(s); }
} // namespace

TEST_CASE("the approximate counter's rules") {
  CHECK(default_counter().name() == "approx-v1");
  CHECK(count("") == 0);
  CHECK(count("hello world") == 2);           // a word each; one space joins
  CHECK(count("internationalization") == 3);  // 1 + (20 - 4) / 6
  CHECK(count("2026") == 2);                  // (4 + 2) / 3
  CHECK(count("a.b") == 3);                   // punctuation is a token
  CHECK(count("if x:\n    return") == 6);     // if x : \n indent return
  CHECK(count("\xc3\xa9t\xc3\xa9") == 1 + 2); // 4 non-ASCII bytes, 1 letter
}

TEST_CASE("runs crossing 64-byte chunks count once") {
  // One 800-letter run: 1 + (800 - 4) / 6 whatever the chunking.
  CHECK(count(std::string(800, 'x')) == 1 + 796 / 6);
  for (size_t lead = 0; lead < 70; ++lead) {
    std::string s = std::string(lead, '.') + "word" + std::string(3, ' ') + "next";
    INFO("lead " << lead);
    // lead dots, two words, one indentation run
    CHECK(count(s) == int64_t(lead) + 2 + 1);
  }
  // A text of whole 64-byte lines of short words (no rounding), each ending
  // in a newline (so nothing joins across them), counts as the sum of its
  // lines, whether a line goes through the vector path or the tail.
  std::string line = "The bot read src/app.py, ran its test; then it was done";
  line += std::string(63 - line.size(), '.') + "\n";
  REQUIRE(line.size() == 64);
  std::string text;
  for (int i = 0; i < 5; ++i) text += line;
  CHECK(count(text) == 5 * count(line));
  CHECK(count(text + "x") == 5 * count(line) + 1);
}
