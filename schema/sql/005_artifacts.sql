-- ctxdb schema 5: the artifact store (DESIGN §1).
--
-- Artifacts are source data, like events: nothing here is derived from the
-- log, so rebuild never touches these tables, and triggers make stored
-- content immutable. The content is addressed by its SHA-256, so the same
-- bytes are stored once however often they are put.

-- One row per distinct content. no is a small integer key that chunks and
-- references repeat instead of the 68-character id; it also lets a
-- streaming put write chunks before the content hash (and so the id) is
-- known: the chunks are written under a fresh no, and the artifacts row
-- that owns them is inserted at finish (no rename needed).
-- kind, mime and name are those of the first put; each later put of the
-- same bytes only adds a reference.
CREATE TABLE artifacts (
  no          INTEGER PRIMARY KEY,
  id          TEXT    NOT NULL UNIQUE,    -- 'art_' + hex SHA-256 of the content
  raw_size    INTEGER NOT NULL,
  stored_size INTEGER NOT NULL,           -- sum of the chunks' data sizes
  chunk_size  INTEGER NOT NULL,           -- every chunk but the last holds exactly this
  chunk_count INTEGER NOT NULL,
  line_count  INTEGER NOT NULL,           -- '\n's, +1 if the last line is unterminated
  kind        TEXT    NOT NULL CHECK (kind IN ('file', 'diff', 'tool_output', 'command_log',
                                               'image', 'dataset', 'url_snapshot', 'other')),
  mime        TEXT,
  name        TEXT,                       -- a file name or path, when there is one
  created_ts  INTEGER NOT NULL            -- ms since the Unix epoch
);

-- The content, in chunks of chunk_size raw bytes, each compressed as its
-- own zstd frame (codec 'zstd') or kept as is when compression would not
-- shrink it ('raw'), so a range read or a search decompresses only the
-- chunks it needs. sha256 is of the raw chunk: every read checks it, so
-- corruption surfaces as an error, never as wrong bytes. newlines lets a
-- line-range read find its first chunk without decompressing any.
-- A rowid table (not WITHOUT ROWID): rows carry up to 256 KiB of data,
-- and data is the last column so reading the metadata never touches the
-- overflow pages that hold it.
CREATE TABLE artifact_chunks (
  artifact_no INTEGER NOT NULL,
  idx         INTEGER NOT NULL,
  raw_size    INTEGER NOT NULL,
  codec       TEXT    NOT NULL CHECK (codec IN ('zstd', 'raw')),
  newlines    INTEGER NOT NULL,
  sha256      BLOB    NOT NULL,
  data        BLOB    NOT NULL,
  PRIMARY KEY (artifact_no, idx)
);

-- Which event refers to which artifact, and as what ('output', 'input',
-- 'image', …). No foreign key to events: a spill at append stores the
-- artifact in the same transaction before the event row exists.
CREATE TABLE artifact_refs (
  artifact_no INTEGER NOT NULL REFERENCES artifacts (no),
  event_id    TEXT    NOT NULL,
  role        TEXT    NOT NULL,
  PRIMARY KEY (artifact_no, event_id, role)
) WITHOUT ROWID;

CREATE INDEX artifact_refs_by_event ON artifact_refs (event_id);

CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: artifacts are immutable; UPDATE is not allowed');
END;

CREATE TRIGGER artifacts_no_delete BEFORE DELETE ON artifacts
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: artifacts are immutable; DELETE is not allowed');
END;

CREATE TRIGGER artifact_chunks_no_update BEFORE UPDATE ON artifact_chunks
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: artifact chunks are immutable; UPDATE is not allowed');
END;

-- Chunks that no artifacts row owns yet are those of a streaming put whose
-- content turned out to be stored already: that put deletes them before it
-- commits. Chunks of a stored artifact never go.
CREATE TRIGGER artifact_chunks_no_delete BEFORE DELETE ON artifact_chunks
WHEN EXISTS (SELECT 1 FROM artifacts WHERE no = OLD.artifact_no)
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: artifact chunks are immutable; DELETE is not allowed');
END;

CREATE TRIGGER artifact_refs_no_update BEFORE UPDATE ON artifact_refs
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: artifact references are append-only; UPDATE is not allowed');
END;

CREATE TRIGGER artifact_refs_no_delete BEFORE DELETE ON artifact_refs
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: artifact references are append-only; DELETE is not allowed');
END;
