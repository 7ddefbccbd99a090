// search_tokenizer.hpp — the FTS5 tokenizer of session search's words
// table: unicode61, except that each Chinese, Japanese or Korean character
// is a token of its own (util/cjk.hpp).
//
// unicode61 makes a run of CJK characters one token, since they are all
// letters, and a sentence with no spaces is then one word: 错误 is not
// found in 数据库连接错误. Split into characters, a query's 错误 is a phrase
// of two tokens (FTS5 makes a bareword or string that yields several tokens
// a phrase) and is found wherever the two stand side by side, at any
// length, inside FTS5 expressions too (错误 OR timeout), ranked by bm25 and
// marked by snippet() on the text as stored (the tokens' offsets are the
// text's own). Everything else is tokenized by unicode61 itself, with the
// arguments the table gives (remove_diacritics 2).
//
// Registered on every connection (store::register_sql_functions): a
// connection without it cannot read the table.
#pragma once

struct sqlite3;

namespace ctxdb::project {

inline constexpr char kSearchTokenizer[] = "ctxdb_words";

// Registers kSearchTokenizer with the connection's FTS5.
void register_search_tokenizer(sqlite3 *db);

} // namespace ctxdb::project
