// search_text.hpp — the text memory_fts indexes, and the FTS5 queries run
// against it.
//
// memory_fts uses SQLite's unicode61 tokenizer, which splits on spaces and
// punctuation: right for English and most scripts, but a run of CJK text
// (no spaces between words) would be one token, and a word inside it could
// not be found. So the indexed text sets every CJK character (Han, kana,
// hangul, their radicals and compatibility forms) apart, and a query turns
// each CJK run into a phrase of its characters: any CJK substring, one
// character long or more, is found where it stands, in order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::memory {

// `text` as indexed: each CJK character between spaces.
std::string index_text(std::string_view text);

// A query of plain words: every word becomes a quoted FTS5 phrase (so no
// character of the query is syntax) and a CJK run a phrase of its
// characters. `all`: every word must match (AND); otherwise any (OR),
// without common English words when others remain. Empty when the query
// has no words.
std::string words_query(std::string_view query, bool all);

// words_query in its parts: its phrases, quoted, in order (FTS5 numbers
// them so), and the expression they join into.
std::vector<std::string> words_phrases(std::string_view query, bool all);
std::string join_phrases(const std::vector<std::string> &phrases, bool all);

// A query in FTS5 syntax, its CJK runs made phrases. It may still be
// invalid syntax; the caller runs it and falls back to words_query().
std::string fts_query(std::string_view query);

} // namespace ctxdb::memory
