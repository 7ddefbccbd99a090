-- ctxdb schema 14: a tool call and its first result share one row.
--
-- Appends wrote each call into tool_calls and each result into
-- tool_results, each table with an index of its own: four b-trees for a
-- call and its result, and writing the result's row cost as much as
-- writing the call's (each ~8% of a batch append, bench_append). Nearly
-- every call gets one result, most often in the same batch; so the first
-- result appended for a call (on whichever branch) is kept in the call's
-- row, which is written once, whole, when both arrive in one transaction.
-- Only a further result (on another path: a fork made after the call)
-- goes to tool_results. The event ids are not copied any more: the events
-- table names them by (session_no, seq).
CREATE TABLE tool_calls_14 (
  session_no       INTEGER NOT NULL,
  seq              INTEGER NOT NULL,
  idx              INTEGER NOT NULL,
  branch_no        INTEGER NOT NULL,
  call_id          TEXT    NOT NULL,
  name             TEXT,
  args             TEXT,                   -- compact JSON (object or string)
  -- The first result appended for the call; all NULL while it has none.
  result_seq       INTEGER,
  result_branch_no INTEGER,
  status           TEXT,                   -- success | error
  artifact_id      TEXT,
  error            TEXT,
  duration_ms      INTEGER,
  exit_code        INTEGER,
  PRIMARY KEY (session_no, seq, idx)
) WITHOUT ROWID;

-- The first result of a call is the one with the lowest seq: seq counts
-- a session's appends, whichever branch they went to.
INSERT INTO tool_calls_14
SELECT c.session_no, c.seq, c.idx, c.branch_no, c.call_id, c.name, c.args,
       r.seq, r.branch_no, r.status, r.artifact_id, r.error, r.duration_ms, r.exit_code
FROM tool_calls c LEFT JOIN tool_results r
  ON r.session_no = c.session_no AND r.seq = (
       SELECT min(f.seq) FROM tool_results f
       WHERE f.session_no = c.session_no AND f.call_seq = c.seq AND f.call_idx = c.idx);

-- The results of a call after its first, one row each.
CREATE TABLE tool_results_14 (
  session_no  INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  call_seq    INTEGER NOT NULL,
  call_idx    INTEGER NOT NULL,
  branch_no   INTEGER NOT NULL,
  status      TEXT    NOT NULL,            -- success | error
  artifact_id TEXT,
  error       TEXT,
  duration_ms INTEGER,
  exit_code   INTEGER,
  PRIMARY KEY (session_no, seq)
) WITHOUT ROWID;

INSERT INTO tool_results_14
SELECT r.session_no, r.seq, r.call_seq, r.call_idx, r.branch_no, r.status, r.artifact_id, r.error,
       r.duration_ms, r.exit_code
FROM tool_results r
WHERE r.seq > (SELECT min(f.seq) FROM tool_results f
               WHERE f.session_no = r.session_no AND f.call_seq = r.call_seq
                 AND f.call_idx = r.call_idx);

DROP TABLE tool_calls;
DROP TABLE tool_results;
ALTER TABLE tool_calls_14 RENAME TO tool_calls;
ALTER TABLE tool_results_14 RENAME TO tool_results;
-- Covering (branch_no, and the key it ends with): without statistics
-- SQLite would otherwise scan the session's rows by primary key instead.
CREATE INDEX tool_calls_by_id ON tool_calls (session_no, call_id, branch_no);
CREATE INDEX tool_results_by_call ON tool_results (session_no, call_seq, call_idx, branch_no);
