-- ctxdb schema 19: ContextAdded, context that is not the user speaking, and
-- the reason of a cancelled call, both searched like the other messages;
-- cancelled calls counted in stats.
--
-- A ContextAdded event's messages row has role instructions (kind
-- instructions) or context (kind context). A compile includes every
-- instructions row of the branch path, compacted or not, so they are found
-- through this index: a few rows per session, never a scan of its messages.
CREATE INDEX messages_instructions ON messages (session_no, seq) WHERE role = 'instructions';

-- The view of schema 11 gains ContextAdded (its text) and ToolCallCancelled
-- (its reason). Cancellations already at or below the search mark are
-- indexed here, the ones above it by the next catch-up; a file of an older
-- schema holds no ContextAdded of the core vocabulary (a host's own type
-- of that name was not a message, and a rebuild re-reads it).
DROP VIEW search_text;
CREATE VIEW search_text (pos, text) AS
SELECT pos,
  CASE type
    WHEN 'UserPromptSubmitted' THEN ifnull(payload ->> '$.text', '')
    WHEN 'BranchSummarized' THEN ifnull(payload ->> '$.text', '')
    WHEN 'ContextAdded' THEN ifnull(payload ->> '$.text', '')
    WHEN 'ToolCallCancelled' THEN ifnull(payload ->> '$.reason', '')
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
               'ToolCallFailed', 'ToolCallCancelled', 'CompactionCompleted', 'BranchSummarized',
               'ContextAdded');

INSERT INTO search_words(rowid, text)
SELECT pos, text FROM search_text
WHERE pos IN (SELECT pos FROM events WHERE type = 'ToolCallCancelled')
  AND pos <= (SELECT pos FROM search_mark WHERE id = 1);
INSERT INTO search_grams(rowid, text)
SELECT pos, text FROM search_text
WHERE pos IN (SELECT pos FROM events WHERE type = 'ToolCallCancelled')
  AND pos <= (SELECT pos FROM search_mark WHERE id = 1);

-- ToolCallCancelled per session. Rows written before this schema hold 0
-- until a rebuild recounts them.
ALTER TABLE stats ADD COLUMN tool_cancellations INTEGER NOT NULL DEFAULT 0;
