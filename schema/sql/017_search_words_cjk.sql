-- ctxdb schema 17: session search's words table finds Chinese, Japanese
-- and Korean words inside sentences.
--
-- unicode61 made a run of CJK characters one token (they are all letters),
-- so a sentence written without spaces was one word, and its words were
-- found only by the trigram table (three characters or more) or by a scan
-- of every message (one or two, which most Chinese words are), and inside
-- an FTS5 expression (错误 OR timeout) not at all. The ctxdb_words
-- tokenizer (project/search_tokenizer.hpp) is unicode61 with each CJK
-- character a token of its own, so a query's CJK word is a phrase of its
-- characters, found from the index like any word. The table is rebuilt
-- with it, up to the search mark (what was indexed before stays indexed).
DROP TABLE search_words;

CREATE VIRTUAL TABLE search_words USING fts5 (
  text, content = 'search_text', content_rowid = 'pos',
  tokenize = 'ctxdb_words remove_diacritics 2'
);

INSERT INTO search_words(rowid, text)
SELECT pos, text FROM search_text WHERE pos <= (SELECT pos FROM search_mark WHERE id = 1);
