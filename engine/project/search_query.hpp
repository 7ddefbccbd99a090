// search_query.hpp — what a user typed into session search, turned into
// FTS5 expressions that cannot fail to parse.
//
// A query is taken as FTS5 syntax only when it uses some (quotes, *, ^,
// parentheses, a column filter, AND/OR/NOT/NEAR) and the words table
// accepts it; anything else is plain words: split on white space, each
// term quoted as an FTS5 string, all of them required. So `src/ctxdb`,
// `C++`, `NOT` or `a:b` are searched for, never reported as syntax errors.
#pragma once

#include "util/regex.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::project {

// The terms of a plain query: split on ASCII white space and U+3000
// (the ideographic space); empty when the query is only white space.
std::vector<std::string> split_terms(std::string_view query);

// `term` as an FTS5 string: in double quotes, a quote doubled.
std::string fts_quote(std::string_view term);

// Every term, quoted, as one expression requiring them all.
std::string plain_match(const std::vector<std::string> &terms);

// The terms that have a word character (a letter or digit, or a non-ASCII
// character outside the symbol blocks): a term of punctuation or symbols
// alone has no word token, and FTS5 matches nothing when one of the
// phrases it requires has none.
std::vector<std::string> word_terms(const std::vector<std::string> &terms);

// Whether the query uses FTS5 syntax at all (it may still not parse).
bool looks_like_fts(std::string_view query);

// Whether an FTS5 query has a term of fewer than 3 characters (operators
// and column names aside; terms end where FTS5 ends them, at any character
// that is not a letter, digit, '_' or non-ASCII, outside quotes): the
// trigram table matches no row with such a term.
bool has_short_fts_term(std::string_view query);

// Whether an FTS5 query uses NOT. The trigram table matches text as it is
// (no diacritics folded, punctuation kept), so there NOT excludes less than
// on the words table: `X NOT café` would bring back an X with "cafe".
bool has_fts_not(std::string_view query);

// The first term of an FTS5 query of 3 characters or more (what a
// substring hit's snippet marks), or "".
std::string first_long_fts_term(std::string_view query);

// The term when the query is one quoted term without white space
// ("错误", "->"): the same as the bare term, which plain words search
// further (substrings, the scan) than a phrase can be.
std::optional<std::string> one_quoted_term(std::string_view query);

// The number of code points of valid UTF-8 text.
size_t utf8_length(std::string_view text);

// Whether the text has a character of the CJK blocks: ideographs, kana,
// hangul, and their symbols and punctuation (㈱, ㎡, 。), which unicode61
// does not make words of.
bool has_cjk(std::string_view text);

// Whether a term is Chinese, Japanese or Korean characters alone
// (util/cjk.hpp), which the words table finds wherever they stand
// (search_tokenizer.hpp).
bool all_cjk(std::string_view term);

// A window of `text` around its first match of `needle` (case folded as
// the FTS5 tables fold it), the match marked «…», cut on character
// boundaries and marked with … where cut; the start of the text when there
// is no match or no needle.
std::string mark_snippet(std::string_view text, util::CaselessFinder *needle, size_t context_bytes);

} // namespace ctxdb::project
