// regex.hpp — a PCRE2 pattern compiled for JIT matching, with the match
// data and JIT stack matching it needs, freed together.
//
// Text may hold any bytes: invalid UTF-8 never matches (it does not fail
// the match). A Regex is used by one thread at a time (its match data).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
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

// A literal found without regard to case: by Unicode's simple case
// folding (as FTS5's unicode61 and trigram tokenizers fold it), through a
// caseless PCRE2 literal; a needle too long for PCRE2 to compile (tens of
// kilobytes: its pattern size limit) is searched for with ASCII folded.
class CaselessFinder {
public:
  explicit CaselessFinder(std::string_view needle);

  // The first match in s: [start, end), or false.
  bool find(std::string_view s, size_t &start, size_t &end);

private:
  std::unique_ptr<Regex> regex_;
  std::string folded_; // without regex_: the needle, ASCII folded
};

} // namespace ctxdb::util
