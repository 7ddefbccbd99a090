-- ctxdb schema 16: state snapshots are stored compressed.
--
-- A working agent's state runs to tens of KB of compact JSON (facts, files,
-- decisions, each with its event ids), and a snapshot copies it every
-- kSnapshotEvery events of a branch (project/state.hpp): in a coding
-- agent's log of 200k events they were 8% of the file and 40% of its
-- derived pages, which every rebuild clears, writes and checksums. A
-- snapshot now holds a zstd frame of the JSON, about a tenth of its size.
-- ctxdb_zstd / ctxdb_unzstd are the engine's own SQL functions
-- (store/store.cpp), on ctxdb connections only. The branches' current
-- rows (state) stay JSON: every transaction rewrites one.
--
-- The declared type says what the bytes are, and rebuild checksums such a
-- column by the JSON it decompresses to (project/rebuild.cpp), so another
-- zstd that compresses differently does not count as a change.

CREATE TABLE state_snapshots_zstd (
  branch_no INTEGER NOT NULL,
  seq       INTEGER NOT NULL,
  state     ZSTD_JSON_BLOB NOT NULL      -- zstd frame of the compact JSON
);
INSERT INTO state_snapshots_zstd
  SELECT branch_no, seq, ctxdb_zstd(state) FROM state_snapshots ORDER BY branch_no, seq;
DROP TABLE state_snapshots;
ALTER TABLE state_snapshots_zstd RENAME TO state_snapshots;
CREATE UNIQUE INDEX state_snapshots_by_branch ON state_snapshots (branch_no, seq);
