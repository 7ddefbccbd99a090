-- ctxdb schema 9: the session-search index is brought up to date by
-- searches instead of inside every append (project/search_index.hpp).
--
-- search_mark holds the last events.pos whose message is in search_words
-- and search_grams: every message event at or below it is indexed, none
-- above it. An append leaves the mark alone (unless the index lags far
-- behind: see kMaxLag); a search on a handle that can write indexes
-- (mark, max(pos)] and advances the mark in one transaction, and one that
-- cannot searches the events above the mark through a private index of
-- its own. One row; rebuild deletes it, and the replay indexes every
-- message and writes it back.
CREATE TABLE search_mark (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  pos INTEGER NOT NULL
);
-- Schema 8 indexed every message inside its append: all of it is indexed.
INSERT INTO search_mark(id, pos) SELECT 1, ifnull(max(pos), 0) FROM events;

-- Each memory scope owns a contiguous range of memory_fts rowids
-- (engine/memory/scope_rows.hpp), so retrieval scores the matches of the
-- scopes it asks for, not of every memory. doc_id was the pos of the
-- memory's MemoryWritten; it becomes that pos inside its scope's range
-- (ctxdb_scope_first_row is registered by the library on every connection).
-- memories_fts_update moves each row of memory_fts with it.
UPDATE memories SET doc_id = ctxdb_scope_first_row(scope_key) + doc_id;

