-- ctxdb schema 18: stats sum reasoning tokens and a cost.
--
-- AssistantMessageCreated usage has one meaning whatever the provider
-- (input_tokens uncached, cache_read_tokens, cache_write_tokens,
-- output_tokens including reasoning_tokens); stats now sum the reasoning
-- part too. A session whose SessionStarted payload holds a price table
-- ("pricing": {"<model>": {"input", "cache_read", "cache_write",
-- "output"}}, USD per million tokens) has each priced message's cost
-- summed, in nano-USD so that the sum stays an exact integer, with the
-- count of messages priced. Rows written before this schema hold 0 until
-- a rebuild recounts them.
ALTER TABLE stats ADD COLUMN usage_reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stats ADD COLUMN cost_nano_usd INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stats ADD COLUMN priced_messages INTEGER NOT NULL DEFAULT 0;

-- Per model, the input tokens providers reported for responses that
-- answered a recorded compile (an AssistantMessageCreated whose parent is
-- a ContextBuilt) against the tokens that compile counted: reported /
-- estimated is how far the token counter is off for that model.
CREATE TABLE token_calibration (
  model            TEXT    PRIMARY KEY,
  samples          INTEGER NOT NULL,
  estimated_tokens INTEGER NOT NULL, -- the ContextBuilts' used_tokens
  reported_tokens  INTEGER NOT NULL  -- input + cache_read + cache_write
) WITHOUT ROWID;
