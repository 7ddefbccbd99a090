// rebuild.hpp — dropping every derived table and replaying the log into it
// (DESIGN §1 rule 1): the proof that the projections hold nothing but what
// the log says.
//
// One exception, by default: the session-search index is an index of the
// log itself (FTS5 over a view of the events table that the migrations
// define, project/search_index.hpp), not state a projection's code
// derives, so no replay can change what it holds; re-indexing it cost
// three times the replay of every other projection. A rebuild brings it up
// to the last event and keeps it (the report lists it as kept);
// RebuildOptions::log_indexes re-derives and compares it like the rest.
//
// The checksums of the tables a rebuild starts from are read on a second
// connection, on a thread of its own, while the rebuild's connection
// clears and replays (rebuild.cpp says why that reads the right state).
// A rebuild whose tables all come out as they were rolls back rather than
// rewrite every derived page to change no row: only a rebuild that
// repairs something writes the file (and the kept index's catch-up, which
// commits on its own first).
#pragma once

#include "log/event_log.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <span>
#include <string>
#include <vector>

namespace ctxdb::project {

struct TableChecksum {
  std::string table;
  int64_t rows = 0;
  std::string before; // SHA-256 (hex) of the rows in a canonical order
  std::string after;
};

struct RebuildReport {
  int64_t events = 0; // events replayed
  std::vector<TableChecksum> tables;
  bool identical = true; // every table's checksum unchanged
  // Tables of the log's own indexes, brought up to date and kept.
  std::vector<std::string> kept;
};

struct RebuildOptions {
  // A difference in any rebuilt table is kCheckFailed naming the tables,
  // and the transaction rolls back (nothing changes); without it the
  // rebuilt tables are committed.
  bool check = false;
  // Re-derive the indexes of the log too (Projection::indexes_log): the
  // session-search index is cleared and indexed again from the events.
  // Without it, it is caught up to the last event and kept, since what it
  // holds is a function of the stored events alone: re-indexing costs
  // three times the replay of every projection.
  bool log_indexes = false;
};

// Clears the projections' tables and replays every event in append order,
// in one write transaction.
RebuildReport rebuild(store::Store &store, log::EventLog &log,
                      std::span<Projection *const> projections, const RebuildOptions &options);

// SHA-256 (hex) over every row of `table` ordered by all its columns, each
// value written with its type, so any changed, added or removed row changes
// it. `rows` receives the row count.
std::string table_checksum(store::Store &store, const std::string &table, int64_t &rows);

} // namespace ctxdb::project
