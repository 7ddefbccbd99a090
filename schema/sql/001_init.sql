-- ctxdb schema 1: the event log and the sessions projection.
--
-- events is source data: append-only (triggers below), one hash chain per
-- session. pos is the global append order, which export and replay follow.
CREATE TABLE events (
  pos          INTEGER PRIMARY KEY,
  id           TEXT    NOT NULL UNIQUE,
  session_id   TEXT    NOT NULL,
  seq          INTEGER NOT NULL,
  ts           INTEGER NOT NULL,          -- ms since the Unix epoch
  type         TEXT    NOT NULL,
  actor        TEXT    NOT NULL,
  parent_id    TEXT,
  run_id       TEXT,
  causality    TEXT,                      -- compact JSON
  visibility   TEXT,                      -- compact JSON
  payload      TEXT,                      -- compact JSON; hashed as stored
  payload_hash BLOB    NOT NULL,          -- SHA-256 of payload
  prev_hash    BLOB    NOT NULL,          -- hash of seq-1 (zeros for seq 1)
  hash         BLOB    NOT NULL,          -- SHA-256(prev ‖ header ‖ payload_hash)
  UNIQUE (session_id, seq)
);

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: events are append-only; UPDATE is not allowed');
END;

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: events are append-only; DELETE is not allowed');
END;

-- The head of each session's chain, written in the same transaction as the
-- events. It makes appends O(1) and lets verify notice a deleted tail,
-- which the chain alone cannot show.
CREATE TABLE session_heads (
  session_id TEXT    PRIMARY KEY,
  last_seq   INTEGER NOT NULL,
  last_hash  BLOB    NOT NULL,
  last_ts    INTEGER NOT NULL
) WITHOUT ROWID;

-- Projection of SessionStarted events.
CREATE TABLE sessions (
  id               TEXT    PRIMARY KEY,
  agent_id         TEXT    NOT NULL,
  started_event_id TEXT    NOT NULL,
  created_ts       INTEGER NOT NULL
) WITHOUT ROWID;
