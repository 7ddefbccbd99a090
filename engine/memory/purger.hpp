// purger.hpp — the privacy purge: a MemoryDeleted with mode "purge" removes
// the payloads of the events it lists from the log, in the transaction
// that appends it.
//
// The chain hashes payload_hash, not the payload, so the chain stays
// valid. What proves a removal is the log itself: the purge lists each
// event whose payload it removes with that payload's hash, in "purged":
// [{"event_id", "payload_hash"}], and it may name only earlier events of
// its own chain (session), so the proof is covered by the same chain as
// the events it removes. A memory whose events lie in several sessions is
// purged by one purge per session, in one transaction (Engine::
// memory_forget): the first lists the whole trail in purged_event_ids and
// ends the memory, each proves its own chain's payloads; every listed
// event must lose its payload in that transaction. The purges table
// records which purge removed each payload, and verify checks every NULL
// payload against the purge that row names (log/event_log.cpp). The
// events table's update trigger (schema/sql/007_memories.sql) allows this
// one change and nothing else: payload to NULL, for an event with a purge
// record.
//
// A purge without "purged" (written before purges carried proofs) is
// accepted only where its events' payloads are gone already (an import of
// an older export): it removes nothing, and verify reports those payloads as
// unproven, since that form could be forged.
//
// It is an observer of the log but not a projection: it writes source data
// (payloads, purges), which rebuild never rewrites, so rebuild does not
// replay it. It runs at append and at import: an imported purge removes
// what it names here too, proving it the same way.
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

#include <cstdint>
#include <optional>
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
  struct Proof {
    std::string event_id;
    std::string payload_hash; // hex
  };
  struct Pending {
    std::string purged_by;
    std::string memory_id;
    int64_t session_no = 0; // the purge's chain and place in it
    int64_t seq = 0;
    std::vector<std::string> listed;          // purged_event_ids
    std::optional<std::vector<Proof>> proofs; // "purged"; absent in the older form
  };
  // A listed event as stored: a Memory event of the purge's memory.
  struct Stored {
    std::string type;
    std::optional<std::string> payload;
    int64_t session_no = 0;
    int64_t seq = 0;
    std::string payload_hash; // hex
  };
  [[noreturn]] static void refuse(const Pending &purge, const char *field, const std::string &id,
                                  const std::string &why);
  Stored stored(const Pending &purge, const char *field, const std::string &id);
  void remove(const Pending &purge, const Proof &proof);
  void accept_unproven(const Pending &purge);
  void check_removed(const Pending &purge, const std::string &id);
  void record(const Pending &purge, const std::string &id);

  store::Store &store_;
  project::PayloadCache &payloads_;
  simdjson::dom::parser parser_;
  std::vector<Pending> pending_;
};

} // namespace ctxdb::memory
