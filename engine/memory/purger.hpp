// purger.hpp — the privacy purge: a MemoryDeleted with mode "purge" removes
// the payloads of the events it lists from the log, in the transaction
// that appends it.
//
// The chain hashes payload_hash, not the payload, so the chain stays
// valid; the purges table records which event removed each payload, and
// verify reports a removed payload with its purge instead of a broken
// event. The events table's update trigger (schema/sql/007_memories.sql)
// allows this one change and nothing else: payload to NULL, for an event
// with a purge record.
//
// It is an observer of the log but not a projection: it writes source data
// (payloads, purges), which rebuild never rewrites, so rebuild does not
// replay it. It runs at append and at import: an imported purge removes
// what it names here too.
//
// Removed must mean gone from the file, not only from the tables: SQLite
// leaves deleted bytes in free space, and FTS5 keeps a deleted document's
// terms in older index segments until they merge. So every connection
// runs with PRAGMA secure_delete on (store.cpp; freed space is zeroed,
// also the copies freed before the purge: a superseded version, merged
// segments), and the purger's flush rewrites memory_fts into one segment
// ('optimize'), which drops the terms. Old page images can remain in the
// WAL until it is checkpointed; the engine's forget checkpoints it
// (engine.cpp).
#pragma once

#include "log/event_log.hpp"
#include "project/payload_cache.hpp"
#include "store/store.hpp"

#include <string>
#include <vector>

namespace ctxdb::memory {

class Purger : public log::EventObserver {
public:
  Purger(store::Store &store, project::PayloadCache &payloads)
      : store_(store), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  // Runs after the log has written the transaction's events, so every
  // listed event is in the table, those of the same batch included.
  void flush() override;
  void discard() override;

private:
  struct Pending {
    std::string purged_by;
    std::string memory_id;
    std::vector<std::string> event_ids;
  };
  store::Store &store_;
  project::PayloadCache &payloads_;
  std::vector<Pending> pending_;
};

} // namespace ctxdb::memory
