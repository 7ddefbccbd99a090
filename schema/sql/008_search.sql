-- ctxdb schema 8: search of sessions: full-text indexes over the
-- text of every message (project/search_index.hpp).
--
-- The text is already in events.payload, so it is not stored again: both
-- FTS5 tables are external-content tables over the view search_text,
-- which renders a message event's searchable text from its payload with
-- SQLite's JSON functions. The FTS rowid is the event's pos, so reading a
-- hit's text (for snippet()) is one primary-key lookup in events. The
-- projection indexes with INSERT … SELECT from this same view, so what is
-- indexed and what a snippet marks can never disagree, and a message's
-- text exists once in the file (a stored copy would cost as much again as
-- the messages themselves; see bench_search for the sizes).
--
-- What a user searches, per message event (the same strings the messages
-- projection counts tokens of):
--   UserPromptSubmitted      text
--   AssistantMessageCreated  every block's text, each tool call's name and args
--   ToolCallFinished/Failed  output and error; a spilled output is indexed as
--                            stored, i.e. its preview (the whole is an artifact,
--                            searched with ctxdb_artifact_search)
--   CompactionCompleted      the summary (its text, or its JSON)
-- Parts are joined by newlines; a message without text is indexed as ''.
CREATE VIEW search_text (pos, text) AS
SELECT pos,
  CASE type
    WHEN 'UserPromptSubmitted' THEN ifnull(payload ->> '$.text', '')
    WHEN 'AssistantMessageCreated' THEN ifnull(
      (SELECT group_concat(
         trim(ifnull(b.value ->> '$.text', '') || ' ' || ifnull(b.value ->> '$.name', '') || ' ' ||
              CASE json_type(b.value, '$.args')
                WHEN 'text' THEN b.value ->> '$.args'
                WHEN 'null' THEN ''
                ELSE ifnull(b.value -> '$.args', '')
              END),
         char(10))
       FROM json_each(payload, '$.content') b), '')
    WHEN 'CompactionCompleted' THEN
      CASE json_type(payload, '$.summary')
        WHEN 'text' THEN payload ->> '$.summary'
        ELSE ifnull(payload -> '$.summary', '')
      END
    ELSE trim(ifnull(payload ->> '$.output', '') || char(10) || ifnull(payload ->> '$.error', ''),
              char(10))
  END
FROM events
WHERE type IN ('UserPromptSubmitted', 'AssistantMessageCreated', 'ToolCallFinished',
               'ToolCallFailed', 'CompactionCompleted');

-- Words: unicode61 tokens (case and diacritics folded), ranked by bm25.
CREATE VIRTUAL TABLE search_words USING fts5 (
  text, content = 'search_text', content_rowid = 'pos',
  tokenize = 'unicode61 remove_diacritics 2'
);

-- Substrings: every 3-character window (case folded), for Chinese and
-- Japanese (no spaces between words) and for pieces of identifiers and
-- paths. A query term shorter than 3 characters cannot use it (see
-- search_index.hpp for what a search does then).
CREATE VIRTUAL TABLE search_grams USING fts5 (
  text, content = 'search_text', content_rowid = 'pos',
  tokenize = 'trigram'
);
