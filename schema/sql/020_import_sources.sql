-- ctxdb schema 20: what each imported file of another agent has given.
--
-- Every event an importer of other agents' session files (Claude Code,
-- Codex, Pi; engine/transcript/) appends carries payload.provenance
-- {"format", "file", "line", "last_line"?}, and the last event of each
-- pass also "end_offset" (the bytes of the file read) and "prefix_sha256"
-- (the SHA-256 of those bytes). Per file, the greatest line imported and
-- the latest end offset and prefix hash: a later pass checks that the file
-- still begins with those bytes (else it changed in its middle and is not
-- merged) and reads on after that line. A projection like any other,
-- rebuilt from the events.
CREATE TABLE import_sources (
  file          TEXT    PRIMARY KEY, -- the path as the importer recorded it
  format        TEXT    NOT NULL,    -- "claude-code", "codex", "pi"
  session_id    TEXT    NOT NULL,    -- the session of its first event
  last_line     INTEGER NOT NULL,    -- the greatest source line imported
  end_offset    INTEGER NOT NULL,    -- bytes read by the last pass (0: none recorded)
  prefix_sha256 TEXT    NOT NULL     -- hex SHA-256 of bytes [0, end_offset) ('' with 0)
) WITHOUT ROWID;
