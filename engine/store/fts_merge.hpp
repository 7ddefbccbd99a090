// fts_merge.hpp — the segments of an FTS5 index, and merging them into one.
//
// FTS5 adds a segment to an index for every transaction that writes it and
// merges them on later writes (automerge: a level's 4 segments into one).
// A query looks up each of its phrases in every segment and merges their
// doclists, so the number of segments is the cost that grows with the
// write history: at a million memories written in 200 batches,
// memory_fts holds 9 segments, and a retrieval on the same index merged
// into one runs in ~20% fewer instructions (bench/memory.cpp). Merging
// rewrites every page of the index, so ctxdb does it when asked
// (ctxdb_optimize), not behind writes: an index that one bulk load built
// is merged once; FTS5's own merges keep it in shape afterwards.
#pragma once

#include "store/store.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ctxdb::store {

struct FtsShape {
  int64_t levels = 0;                 // FTS5's levels, empty ones included
  std::vector<int64_t> segment_pages; // leaf pages of each segment
  int64_t pages() const;
};

// The structure record of the FTS5 table `table` (FTS5 as of SQLite
// 3.40), or an empty shape when the index has none yet. `table` is one of
// the engine's own names, never input.
FtsShape fts_shape(Store &store, const std::string &table);

// Merges the index into one segment, in the caller's write transaction.
void fts_merge(Store &store, const std::string &table);

} // namespace ctxdb::store
