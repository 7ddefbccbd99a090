// projection.hpp — what every derived table's maintainer is: an observer of
// the log that owns some tables. The log feeds it each event inside the
// append transaction; rebuild clears its tables and feeds it the whole log
// again, in append order, which must give the same tables.
#pragma once

#include "log/event_log.hpp"

#include <span>

namespace ctxdb::project {

class Projection : public log::EventObserver {
public:
  // The tables this projection writes and nothing else does. Their rows
  // must be a function of the events seen, in order: nothing else (no
  // clock, no randomness), or rebuild could not reproduce them.
  virtual std::span<const char *const> tables() const = 0;

  // Called by rebuild, in its transaction, before it checksums and clears
  // the tables: a projection that defers work (the search index) does it
  // now, so that the tables compared are what the events say.
  virtual void before_rebuild() {}

  // True for an index of the stored events themselves (the session-search
  // index: FTS5 over a view of the events table that the migrations
  // define, project/search_index.hpp), whose rows no replay of projection
  // code can change: a rebuild brings it up to date and keeps it, unless
  // asked to re-derive it too (rebuild.hpp).
  virtual bool indexes_log() const { return false; }
};

} // namespace ctxdb::project
