-- ctxdb schema 3: messages, tool calls and file events (DESIGN §2).
--
-- All are projections of the log (engine/project/): rebuild clears them and
-- replays. Rows are keyed by (session_no, seq) of the event they come from
-- and carry its branch_no, so a branch's view is one range scan per segment
-- of its path (log/tree.hpp), never a walk over parent pointers.

-- One row per message-bearing event: its role, and its tokens counted once,
-- at append, by the counter named in token_counter. The typed blocks
-- (messages.schema.json) are a function of the event's payload and are
-- rendered from it when read, so the text is not stored twice.
CREATE TABLE messages (
  session_no    INTEGER NOT NULL,
  seq           INTEGER NOT NULL,
  branch_no     INTEGER NOT NULL,
  role          TEXT    NOT NULL,          -- user | assistant | tool | summary
  tokens        INTEGER NOT NULL,
  token_counter TEXT    NOT NULL,
  PRIMARY KEY (session_no, seq)
) WITHOUT ROWID;

-- One row per tool_call block of an AssistantMessageCreated event: the
-- event's seq and the block's index in its content name the call.
CREATE TABLE tool_calls (
  session_no INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  idx        INTEGER NOT NULL,
  branch_no  INTEGER NOT NULL,
  call_id    TEXT    NOT NULL,
  event_id   TEXT    NOT NULL,
  name       TEXT,
  args       TEXT,                         -- compact JSON (object or string)
  PRIMARY KEY (session_no, seq, idx)
) WITHOUT ROWID;
-- Covering (branch_no, and the key it ends with): without statistics
-- SQLite would otherwise scan the session's rows by primary key instead.
CREATE INDEX tool_calls_by_id ON tool_calls (session_no, call_id, branch_no);

-- One row per ToolCallFinished / ToolCallFailed. A call may have one result
-- on each path through the tree (a fork after the call may get its own), so
-- the status of a call is that of the result on the path being read. The
-- output itself stays in the event and the tool message.
CREATE TABLE tool_results (
  session_no  INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  call_seq    INTEGER NOT NULL,
  call_idx    INTEGER NOT NULL,
  branch_no   INTEGER NOT NULL,
  event_id    TEXT    NOT NULL,
  status      TEXT    NOT NULL,            -- success | error
  artifact_id TEXT,
  error       TEXT,
  duration_ms INTEGER,
  exit_code   INTEGER,
  PRIMARY KEY (session_no, seq)
) WITHOUT ROWID;
CREATE INDEX tool_results_by_call ON tool_results (session_no, call_seq, call_idx, branch_no);

-- One row per FileRead / FileWritten / DiffApplied. The per-file view of a
-- branch (last read, last write, changes) is folded from its path at read
-- time, so a fork needs no copy of its ancestors' file state.
CREATE TABLE file_events (
  session_no     INTEGER NOT NULL,
  seq            INTEGER NOT NULL,
  branch_no      INTEGER NOT NULL,
  event_id       TEXT    NOT NULL,
  op             TEXT    NOT NULL,         -- read | write | diff
  path           TEXT    NOT NULL,
  artifact_id    TEXT,
  change_summary TEXT,
  bytes          INTEGER,
  tool_call_id   TEXT,
  PRIMARY KEY (session_no, seq)
) WITHOUT ROWID;
