// regex.hpp — a PCRE2 pattern compiled for JIT matching, with the match
// data and JIT stack matching it needs, freed together.
//
// Text may hold any bytes: invalid UTF-8 never matches (it does not fail
// the match). A Regex is used by one thread at a time (its match data).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

namespace ctxdb::util {

struct RegexOptions {
  bool ignore_case = false; // Unicode simple case folding, not ASCII only
  bool multiline = false;   // ^ and $ at every line
  bool literal = false;     // the pattern is plain text, no syntax
};

class Regex {
public:
  // Throws kInvalidArg naming the pattern, PCRE2's message and the offset
  // when the pattern does not compile.
  Regex(std::string_view pattern, RegexOptions options);
  ~Regex();
  Regex(Regex &&) noexcept;
  Regex &operator=(Regex &&) noexcept;

  // `text` as a literal, matched without regard to case (Unicode's simple
  // case folding, as FTS5's unicode61 and trigram tokenizers fold it).
  static Regex caseless(std::string_view text) {
    return Regex(text, {.ignore_case = true, .literal = true});
  }

  // The first match in s at or after `from`: [start, end), or false. A
  // match with ignore_case may differ from the pattern in length ("K", the
  // Kelvin sign, is three bytes and matches "k").
  bool find(std::string_view s, size_t from, size_t &start, size_t &end);

  // Whether s holds a match.
  bool contains(std::string_view s);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace ctxdb::util
