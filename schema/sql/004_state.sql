-- ctxdb schema 4: the agent state per branch, its snapshots, and stats.
--
-- All three are projections (project/state.hpp, project/stats.hpp):
-- rebuild clears them and replays the log.
--
-- The current state of every branch: the fold of the events on its path
-- (state.schema.json's "state"), written once per transaction that touches
-- the branch. since_snapshot counts the events on the path after the
-- nearest snapshot, so snapshots come every kSnapshotEvery events.
CREATE TABLE state (
  branch_no      INTEGER PRIMARY KEY,
  session_no     INTEGER NOT NULL,
  seq            INTEGER NOT NULL,       -- the last event folded: the leaf
  event_id       TEXT    NOT NULL,
  since_snapshot INTEGER NOT NULL,
  state          TEXT    NOT NULL        -- compact JSON
);

-- The state right after event seq (on branch branch_no), every
-- kSnapshotEvery events on a path: time travel starts from the nearest one.
-- A rowid table with a separate key: its rows are a few KB, which a
-- WITHOUT ROWID table would spill to overflow pages.
CREATE TABLE state_snapshots (
  branch_no INTEGER NOT NULL,
  seq       INTEGER NOT NULL,
  state     TEXT    NOT NULL
);
CREATE UNIQUE INDEX state_snapshots_by_branch ON state_snapshots (branch_no, seq);

-- Per-session counters (project/stats.hpp), written once per transaction
-- that touches the session. Token counts of message texts are not here:
-- messages (003) counts each message once, at append, and stats sums them
-- when read.
CREATE TABLE stats (
  session_no               INTEGER PRIMARY KEY,
  events                   INTEGER NOT NULL,
  user_prompts             INTEGER NOT NULL,
  assistant_messages       INTEGER NOT NULL,
  usage_input_tokens       INTEGER NOT NULL,
  usage_output_tokens      INTEGER NOT NULL,
  usage_cache_read_tokens  INTEGER NOT NULL,
  usage_cache_write_tokens INTEGER NOT NULL,
  tool_calls               INTEGER NOT NULL,
  tool_results             INTEGER NOT NULL,
  tool_errors              INTEGER NOT NULL,  -- results with is_error
  tool_failures            INTEGER NOT NULL,  -- ToolCallFailed
  tool_duration_count      INTEGER NOT NULL,
  tool_duration_total_ms   INTEGER NOT NULL,
  tool_duration_max_ms     INTEGER NOT NULL,
  latency_count            INTEGER NOT NULL,
  latency_total_ms         INTEGER NOT NULL,
  latency_max_ms           INTEGER NOT NULL,
  approvals_requested      INTEGER NOT NULL,
  approvals_granted        INTEGER NOT NULL,
  approvals_denied         INTEGER NOT NULL,
  compactions              INTEGER NOT NULL,
  compactions_failed       INTEGER NOT NULL,
  compaction_tokens_before INTEGER NOT NULL,
  compaction_tokens_after  INTEGER NOT NULL,
  context_builds           INTEGER NOT NULL,
  context_used_tokens      INTEGER NOT NULL,
  errors                   INTEGER NOT NULL
);
