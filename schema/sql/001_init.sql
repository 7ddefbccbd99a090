-- ctxdb schema 1: the event log and the sessions projection.
--
-- One hash chain per session. chains gives each session a small integer
-- (events store it instead of repeating the text id, which keeps rows and
-- the (session, seq) index small) and records the chain's head, written in
-- the same transaction as the events: appends read it in O(1), and verify
-- uses it to notice a deleted tail, which the chain alone cannot show.
CREATE TABLE chains (
  session_no INTEGER PRIMARY KEY,
  session_id TEXT    NOT NULL UNIQUE,
  last_seq   INTEGER NOT NULL,
  last_hash  BLOB    NOT NULL,
  last_ts    INTEGER NOT NULL
);

-- events is source data: append-only (triggers below). pos is the global
-- append order, which export and replay follow.
CREATE TABLE events (
  pos          INTEGER PRIMARY KEY,
  id           TEXT    NOT NULL UNIQUE,
  session_no   INTEGER NOT NULL REFERENCES chains (session_no),
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
  hash         BLOB    NOT NULL,          -- SHA-256(prev || header || payload_hash)
  UNIQUE (session_no, seq)
);

CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: events are append-only; UPDATE is not allowed');
END;

CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'ctxdb: events are append-only; DELETE is not allowed');
END;

-- Projection of SessionStarted events.
CREATE TABLE sessions (
  id               TEXT    PRIMARY KEY,
  agent_id         TEXT    NOT NULL,
  started_event_id TEXT    NOT NULL,
  created_ts       INTEGER NOT NULL
) WITHOUT ROWID;
