-- ctxdb schema 10: what an artifact chunk's sha256 covers.
--
-- Chunks written from now on keep the SHA-256 of their stored bytes (the
-- zstd frame, or the raw bytes of a 'raw' chunk): sha256_of = 'stored'.
-- A read checks the frame before decoding it, and zstd decodes a frame to
-- exactly one content, so the check still means "never wrong bytes" while
-- hashing a fifth of the bytes for text that compresses 5:1 (hashing the
-- raw chunk cost as much as decompressing it). Chunks written before keep
-- the SHA-256 of their raw bytes ('raw', the default) and are checked as
-- before.
ALTER TABLE artifact_chunks ADD COLUMN sha256_of TEXT NOT NULL DEFAULT 'raw'
  CHECK (sha256_of IN ('raw', 'stored'));
