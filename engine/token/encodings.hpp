// encodings.hpp — the BPE encodings ctxdb knows by name: their
// pre-tokenization pattern, special tokens, and the rank file each needs
// (file name, SHA-256 and size of the standard .tiktoken file).
//
// Patterns and specials are tiktoken's (tiktoken_ext/openai_public.py and
// the npm tiktoken's encoders/*.json), copied as written: PCRE2 runs them
// with UTF and UCP. The rank files are not part of the engine; a data
// directory holds them (bpe.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace ctxdb::token {

struct SpecialToken {
  std::string_view text;
  uint32_t id;
};

struct EncodingSpec {
  std::string_view name;    // "o200k_base"
  std::string_view pattern; // the pre-split regex
  std::span<const SpecialToken> specials;
  std::string_view rank_file;   // "o200k_base.tiktoken"
  std::string_view rank_sha256; // hex SHA-256 of the standard rank file
  uint32_t rank_count;          // lines (mergeable ranks) in the rank file
};

// The known encodings, or nullptr for an unknown name.
const EncodingSpec *find_encoding(std::string_view name);
// "o200k_base, cl100k_base": for messages naming what is known.
std::string_view known_encodings();

} // namespace ctxdb::token
