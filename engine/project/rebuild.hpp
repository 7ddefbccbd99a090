// rebuild.hpp — dropping every derived table and replaying the log into it
// (DESIGN §1 rule 1): the proof that the projections hold nothing but what
// the log says.
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
};

// Clears the projections' tables and replays every event in append order,
// in one write transaction. With `check`, a difference in any table is
// kCheckFailed naming the tables, and the transaction rolls back (nothing
// changes); without it the rebuilt tables are committed.
RebuildReport rebuild(store::Store &store, log::EventLog &log,
                      std::span<Projection *const> projections, bool check);

// SHA-256 (hex) over every row of `table` ordered by all its columns, each
// value written with its type, so any changed, added or removed row changes
// it. `rows` receives the row count.
std::string table_checksum(store::Store &store, const std::string &table, int64_t &rows);

} // namespace ctxdb::project
