-- ctxdb schema 15: a count of the changes to memory_rank, under which a
-- connection keeps the bm25 statistics of memory_fts (engine/memory/
-- bm25.hpp).
--
-- Retrieval counts, per query word, the rows of the whole of memory_fts
-- that hold it: a walk of the word's doclist over every memory, about a
-- fifth of a retrieval's instructions at a million memories. The counts
-- only change when memory_fts does, so a connection keeps them; it used
-- to keep them while the file's data version stayed the same, which every
-- commit changes: the usage a retrieval records, and any append. Every
-- row memory_fts gains or loses is one of memory_rank's (the triggers of
-- schema 12 write both), so this count of memory_rank's changes tells
-- when the statistics must be counted again.
--
-- The count only grows, rebuilds included (a rebuild deletes the rows
-- and inserts them again), so a count read again means the same rows. It
-- is not a projection: a rebuild neither clears nor checks it.
CREATE TABLE memory_changes (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  changes INTEGER NOT NULL          -- memory_rank rows inserted and deleted, ever
);
INSERT INTO memory_changes VALUES (1, (SELECT count(*) FROM memory_rank));

CREATE TRIGGER memory_rank_counted_insert AFTER INSERT ON memory_rank BEGIN
  UPDATE memory_changes SET changes = changes + 1 WHERE id = 1;
END;

CREATE TRIGGER memory_rank_counted_delete AFTER DELETE ON memory_rank BEGIN
  UPDATE memory_changes SET changes = changes + 1 WHERE id = 1;
END;

-- The triggers of schema 12 replace a row rather than update it; an
-- update is counted all the same.
CREATE TRIGGER memory_rank_counted_update AFTER UPDATE ON memory_rank BEGIN
  UPDATE memory_changes SET changes = changes + 2 WHERE id = 1;
END;
