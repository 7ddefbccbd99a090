-- ctxdb schema 7: memories (DESIGN §7) and the privacy purge of a payload.
--
-- memory_versions and memories are projections of the Memory* events
-- (engine/memory/memories.hpp): rebuild clears them and replays the log.
-- memory_fts indexes memories through triggers, so the index is a function
-- of memories' rows (rebuild's DELETE removes every row from the index and
-- the replay adds them back; its checksum of memories covers what the index
-- holds). memory_usage and purges are not projections; see below.

-- Every version of every memory. A MemoryWritten is version 1, each
-- MemoryUpdated the next; the version it supersedes keeps its row with
-- valid_to and ended_by set, so "what was believed at time T" is
-- valid_from <= T < valid_to. A MemoryDeleted ends the last version and
-- clears its content (tombstone); a purge removes the memory's rows.
CREATE TABLE memory_versions (
  memory_id     TEXT    NOT NULL,
  version       INTEGER NOT NULL,
  session_no    INTEGER NOT NULL,          -- the event that wrote it
  seq           INTEGER NOT NULL,
  event_id      TEXT    NOT NULL,
  scope         TEXT    NOT NULL,
  scope_id      TEXT    NOT NULL,          -- '' for global
  kind          TEXT    NOT NULL,
  content       TEXT,                      -- NULL once forgotten
  source_refs   TEXT    NOT NULL,          -- JSON array of ids
  keywords      TEXT    NOT NULL,          -- JSON array
  readers       TEXT,                      -- JSON array of agent ids; NULL: every agent
  confidence    REAL    NOT NULL,
  priority      INTEGER NOT NULL,
  sensitive     INTEGER NOT NULL,
  expires_at    INTEGER,                   -- ms; a TTL is resolved from the event's ts
  update_policy TEXT,
  valid_from    INTEGER NOT NULL,          -- ts of the writing event
  valid_to      INTEGER,                   -- ts of the superseding or deleting event
  ended_by      TEXT,                      -- that event's id
  PRIMARY KEY (memory_id, version)
) WITHOUT ROWID;

-- The current version of each live memory: what retrieval reads. doc_id is
-- the memory's row in memory_fts and stays with it across updates.
-- search_content / search_keywords are the text as indexed: CJK characters
-- set apart by spaces (engine/memory/search_text.hpp).
CREATE TABLE memories (
  doc_id          INTEGER PRIMARY KEY,
  memory_id       TEXT    NOT NULL UNIQUE,
  version         INTEGER NOT NULL,
  scope_key       TEXT    NOT NULL,        -- scope || x'1f' || scope_id
  sensitive       INTEGER NOT NULL,
  readers         TEXT,
  confidence      REAL    NOT NULL,
  priority        INTEGER NOT NULL,
  expires_at      INTEGER,
  valid_from      INTEGER NOT NULL,
  search_content  TEXT    NOT NULL,
  search_keywords TEXT    NOT NULL
);
CREATE INDEX memories_scope ON memories (scope_key);

-- Memories that were forgotten, and how: a purged memory has no other row.
CREATE TABLE memory_forgotten (
  memory_id TEXT    PRIMARY KEY,
  event_id  TEXT    NOT NULL,
  mode      TEXT    NOT NULL,              -- 'tombstone' | 'purge'
  ts        INTEGER NOT NULL
) WITHOUT ROWID;

-- unicode61 folds case and diacritics; CJK has no spaces between words,
-- so the indexed text sets every CJK character apart and a query turns a
-- CJK run into a phrase of its characters: any substring is found,
-- one-character and two-character words included (a trigram tokenizer
-- would miss queries shorter than three characters).
CREATE VIRTUAL TABLE memory_fts USING fts5(
  search_content, search_keywords,   -- named as in memories: its content table
  content = 'memories', content_rowid = 'doc_id',
  tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memory_fts(rowid, search_content, search_keywords)
    VALUES (NEW.doc_id, NEW.search_content, NEW.search_keywords);
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memory_fts(memory_fts, rowid, search_content, search_keywords)
    VALUES ('delete', OLD.doc_id, OLD.search_content, OLD.search_keywords);
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE ON memories BEGIN
  INSERT INTO memory_fts(memory_fts, rowid, search_content, search_keywords)
    VALUES ('delete', OLD.doc_id, OLD.search_content, OLD.search_keywords);
  INSERT INTO memory_fts(rowid, search_content, search_keywords)
    VALUES (NEW.doc_id, NEW.search_content, NEW.search_keywords);
END;

-- Usage (how often retrieval put a memory into a bundle, and when last):
-- a statistic of reads, not a function of the log, so not a projection.
-- rebuild leaves it alone and its checksums do not cover it. Recording a
-- retrieval as an event would make every read a log write.
CREATE TABLE memory_usage (
  memory_id TEXT    PRIMARY KEY,
  use_count INTEGER NOT NULL,
  last_used INTEGER NOT NULL
) WITHOUT ROWID;

-- The privacy purge. A purge removes the payloads of a memory's events
-- from the log; the chain covers payload_hash, not the payload, so it
-- stays verifiable, and verify reports each removed payload with the
-- MemoryDeleted event that removed it. purges is source data like events:
-- written in the purge's transaction, never rebuilt.
CREATE TABLE purges (
  event_id  TEXT PRIMARY KEY,              -- the event whose payload was removed
  purged_by TEXT NOT NULL                  -- the MemoryDeleted (mode purge) event
) WITHOUT ROWID;

-- events stays append-only, with one narrow exception: the payload of an
-- event with a purge record may be set to NULL, and nothing else changes.
DROP TRIGGER events_no_update;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
WHEN NOT (NEW.payload IS NULL AND OLD.payload IS NOT NULL
          AND NEW.pos IS OLD.pos AND NEW.id IS OLD.id
          AND NEW.session_no IS OLD.session_no AND NEW.seq IS OLD.seq
          AND NEW.ts IS OLD.ts AND NEW.type IS OLD.type AND NEW.actor IS OLD.actor
          AND NEW.parent_id IS OLD.parent_id AND NEW.run_id IS OLD.run_id
          AND NEW.causality IS OLD.causality AND NEW.visibility IS OLD.visibility
          AND NEW.payload_hash IS OLD.payload_hash AND NEW.prev_hash IS OLD.prev_hash
          AND NEW.hash IS OLD.hash
          AND EXISTS (SELECT 1 FROM purges WHERE event_id = OLD.id))
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: events are append-only; UPDATE is not allowed');
END;
