// search.hpp — grep inside an artifact: a PCRE2 (JIT) regular expression,
// line by line, streaming over the chunks, with line numbers and context.
//
// This is how an agent finds the error that is not in the tail of a log.
// Matching is per line, as grep's: ^ and $ are a line's start and end, a
// match never spans lines, and a line is reported once however often it
// matches. A line cut by a chunk boundary is matched whole (the tail of
// one chunk is carried into the next).
#pragma once

#include "artifact/artifact_store.hpp"

namespace ctxdb::artifact {

struct SearchOptions {
  int64_t before = 0; // context lines
  int64_t after = 0;
  int64_t max_matches = 100; // stop after this many matching lines
  bool ignore_case = false;
};

struct ContextLine {
  int64_t line = 0; // 1-based
  std::string text; // without its '\n'
};

struct Match {
  int64_t line = 0;   // 1-based
  int64_t offset = 0; // of the line's first byte in the content
  int64_t column = 0; // byte offset of the match in the line
  int64_t length = 0; // of the match, in bytes
  std::string text;   // the line, without its '\n'
  std::vector<ContextLine> before, after;
};

struct SearchResult {
  std::vector<Match> matches;
  bool truncated = false; // stopped at max_matches; there may be more
};

// An invalid pattern is kInvalidArg naming PCRE2's message and the offset.
SearchResult search(ArtifactStore &store, std::string_view id, std::string_view pattern,
                    const SearchOptions &options = {});

} // namespace ctxdb::artifact
