-- ctxdb schema 6: what the context compiler looks back for (DESIGN §5):
-- the compactions on a branch's path, and the bundles built before.
--
-- Both are projections (project/compactions.hpp, project/context_builds.hpp):
-- rebuild clears them and replays the log. Keyed by (session_no, seq) like
-- every per-event table, so "the latest one on a path" is one backward
-- range scan per path segment, whatever the length of the session.

-- One row per CompactionCompleted: the events before first_kept_seq (on
-- the compaction's path) are summarized by it, those from it on are kept.
CREATE TABLE compactions (
  session_no     INTEGER NOT NULL,
  seq            INTEGER NOT NULL,
  branch_no      INTEGER NOT NULL,
  event_id       TEXT    NOT NULL,
  first_kept_seq INTEGER NOT NULL,
  tokens_before  INTEGER,
  tokens_after   INTEGER,
  PRIMARY KEY (session_no, seq)
) WITHOUT ROWID;

-- One row per ContextBuilt: the segments it recorded stay in the event's
-- payload; the compiler reads the latest one on its path to report how
-- many leading tokens a new bundle shares with it.
CREATE TABLE context_builds (
  session_no  INTEGER NOT NULL,
  seq         INTEGER NOT NULL,
  branch_no   INTEGER NOT NULL,
  event_id    TEXT    NOT NULL,
  used_tokens INTEGER NOT NULL,
  PRIMARY KEY (session_no, seq)
) WITHOUT ROWID;
