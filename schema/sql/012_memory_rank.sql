-- ctxdb schema 12: what retrieval filters and ranks a memory by, in a
-- compact row of its own.
--
-- Retrieval scores a scope's matches in memory_fts, joined to each
-- match's %_docsize row (its length, for bm25), and then read the
-- memories row of each of the best ~200 to filter and blend it: at a
-- million memories those reads were a quarter of a retrieval's work, on
-- rows made long by the indexed text. memory_rank holds, per memories row,
-- that docsize record and every column the filters and the blend read, so
-- the FTS query joins it instead of %_docsize, applies the filters itself
-- and returns each match ready to blend (engine/memory/retrieve.cpp).
--
-- It is derived from memories by the triggers below, which write it after
-- FTS5 wrote the row's docsize record; rebuild clears and checks it with
-- the other memory tables.
CREATE TABLE memory_rank (
  doc_id     INTEGER PRIMARY KEY,         -- memories.doc_id, memory_fts rowid
  sz         BLOB    NOT NULL,            -- memory_fts_docsize.sz
  scope_key  TEXT    NOT NULL,
  memory_id  TEXT    NOT NULL,
  version    INTEGER NOT NULL,
  priority   INTEGER NOT NULL,
  confidence REAL    NOT NULL,
  valid_from INTEGER NOT NULL,
  expires_at INTEGER,
  sensitive  INTEGER NOT NULL,
  readers    TEXT                         -- NULL: every agent
);

DROP TRIGGER memories_fts_insert;
DROP TRIGGER memories_fts_delete;
DROP TRIGGER memories_fts_update;

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memory_fts(rowid, search_content, search_keywords)
    VALUES (NEW.doc_id, NEW.search_content, NEW.search_keywords);
  INSERT INTO memory_rank
    VALUES (NEW.doc_id, (SELECT sz FROM memory_fts_docsize WHERE id = NEW.doc_id),
            NEW.scope_key, NEW.memory_id, NEW.version, NEW.priority, NEW.confidence,
            NEW.valid_from, NEW.expires_at, NEW.sensitive, NEW.readers);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memory_fts(memory_fts, rowid, search_content, search_keywords)
    VALUES ('delete', OLD.doc_id, OLD.search_content, OLD.search_keywords);
  DELETE FROM memory_rank WHERE doc_id = OLD.doc_id;
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE ON memories BEGIN
  INSERT INTO memory_fts(memory_fts, rowid, search_content, search_keywords)
    VALUES ('delete', OLD.doc_id, OLD.search_content, OLD.search_keywords);
  INSERT INTO memory_fts(rowid, search_content, search_keywords)
    VALUES (NEW.doc_id, NEW.search_content, NEW.search_keywords);
  DELETE FROM memory_rank WHERE doc_id = OLD.doc_id;
  INSERT INTO memory_rank
    VALUES (NEW.doc_id, (SELECT sz FROM memory_fts_docsize WHERE id = NEW.doc_id),
            NEW.scope_key, NEW.memory_id, NEW.version, NEW.priority, NEW.confidence,
            NEW.valid_from, NEW.expires_at, NEW.sensitive, NEW.readers);
END;

INSERT INTO memory_rank
SELECT m.doc_id, d.sz, m.scope_key, m.memory_id, m.version, m.priority, m.confidence,
       m.valid_from, m.expires_at, m.sensitive, m.readers
FROM memories m JOIN memory_fts_docsize d ON d.id = m.doc_id
ORDER BY m.doc_id;
