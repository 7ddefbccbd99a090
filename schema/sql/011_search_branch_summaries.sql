-- ctxdb schema 11: a branch summary is searched like the other messages.
--
-- A BranchSummarized event (engine/compact/) tells the branch that
-- continues what an abandoned one tried; the messages projection reads its
-- "text" as a user message, so search must find it too. The view of
-- schema 8 gains it; the summaries already at or below the search mark are
-- indexed here, the ones above it by the next catch-up.
DROP VIEW search_text;
CREATE VIEW search_text (pos, text) AS
SELECT pos,
  CASE type
    WHEN 'UserPromptSubmitted' THEN ifnull(payload ->> '$.text', '')
    WHEN 'BranchSummarized' THEN ifnull(payload ->> '$.text', '')
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
               'ToolCallFailed', 'CompactionCompleted', 'BranchSummarized');

INSERT INTO search_words(rowid, text)
SELECT pos, text FROM search_text
WHERE pos IN (SELECT pos FROM events WHERE type = 'BranchSummarized')
  AND pos <= (SELECT pos FROM search_mark);
INSERT INTO search_grams(rowid, text)
SELECT pos, text FROM search_text
WHERE pos IN (SELECT pos FROM events WHERE type = 'BranchSummarized')
  AND pos <= (SELECT pos FROM search_mark);
