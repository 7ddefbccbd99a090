#include "token/encodings.hpp"

#include <array>

namespace ctxdb::token {

namespace {

// tiktoken's o200k_base pattern: letters split by case class so that a
// capitalized word is one piece, contractions in either case, digits in
// groups of up to three, punctuation with trailing newlines or slashes.
constexpr std::string_view kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

constexpr std::string_view kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*)"
    R"(|\s*[\r\n]+|\s+(?!\S)|\s+)";

constexpr std::array<SpecialToken, 2> kO200kSpecials = {{
    {"<|endoftext|>", 199999},
    {"<|endofprompt|>", 200018},
}};

constexpr std::array<SpecialToken, 5> kCl100kSpecials = {{
    {"<|endoftext|>", 100257},
    {"<|fim_prefix|>", 100258},
    {"<|fim_middle|>", 100259},
    {"<|fim_suffix|>", 100260},
    {"<|endofprompt|>", 100276},
}};

constexpr std::array<EncodingSpec, 2> kEncodings = {{
    {"o200k_base", kO200kPattern, kO200kSpecials, "o200k_base.tiktoken",
     "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", 199998},
    {"cl100k_base", kCl100kPattern, kCl100kSpecials, "cl100k_base.tiktoken",
     "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", 100256},
}};

} // namespace

const EncodingSpec *find_encoding(std::string_view name) {
  for (const EncodingSpec &e : kEncodings)
    if (e.name == name) return &e;
  return nullptr;
}

std::string_view known_encodings() { return "o200k_base, cl100k_base"; }

} // namespace ctxdb::token
