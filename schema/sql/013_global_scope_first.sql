-- ctxdb schema 13: the global scope's memories move to the first range of
-- memory_fts rowids.
--
-- Every retrieval the compiler makes asks for the global scope beside its
-- own, and FTS5 reaches a rowid range only by stepping through the
-- entries of a doclist before it, or, reading backwards from the end, by
-- decoding each page anew; from rowid 0 it reads the range forwards with
-- nothing before it (engine/memory/scope_rows.hpp). ctxdb_scope_first_row
-- gives the global scope 0 from this schema on; every other scope keeps
-- its range. A doc_id's low 40 bits are the pos of the memory's
-- MemoryWritten; memories_fts_update moves each changed row of memory_fts
-- and memory_rank with it. ctxdb_optimize merges the index afterwards.
UPDATE memories SET doc_id = ctxdb_scope_first_row(scope_key) + (doc_id & ((1 << 40) - 1))
WHERE doc_id <> ctxdb_scope_first_row(scope_key) + (doc_id & ((1 << 40) - 1));
