-- ctxdb schema 2: the session tree (DESIGN §3) and child sessions.
--
-- Both tables are projections of the log (log/tree.hpp): rebuild clears
-- them and replays. A branch is named by the id of the event that opened
-- it; branch_no is its small integer, given in append order.
CREATE TABLE branches (
  branch_no        INTEGER PRIMARY KEY,
  id               TEXT    NOT NULL UNIQUE,
  session_no       INTEGER NOT NULL,
  kind             TEXT    NOT NULL,       -- main | fork | subagent | what_if
  name             TEXT,
  parent_no        INTEGER,                -- NULL for main
  fork_seq         INTEGER NOT NULL,       -- 0 for main
  fork_event_id    TEXT,                   -- NULL for main
  first_seq        INTEGER NOT NULL,
  leaf_seq         INTEGER NOT NULL,
  leaf_event_id    TEXT    NOT NULL,
  event_count      INTEGER NOT NULL
);
CREATE INDEX branches_by_session ON branches (session_no, fork_seq);

-- Which branch each event is on, as runs: seqs first_seq..last_seq of a
-- session are all on branch_no. One row per switch between branches, not
-- one per event.
CREATE TABLE branch_runs (
  session_no INTEGER NOT NULL,
  first_seq  INTEGER NOT NULL,
  last_seq   INTEGER NOT NULL,
  branch_no  INTEGER NOT NULL,
  PRIMARY KEY (session_no, first_seq)
) WITHOUT ROWID;
CREATE INDEX branch_runs_by_branch ON branch_runs (branch_no, first_seq);

-- Child sessions (subagents) name the session and event that spawned them.
ALTER TABLE sessions ADD COLUMN parent_session_id TEXT;
ALTER TABLE sessions ADD COLUMN spawned_by_event_id TEXT;
CREATE INDEX sessions_by_spawner ON sessions (spawned_by_event_id)
  WHERE spawned_by_event_id IS NOT NULL;
