// memories.hpp — the memories projection (DESIGN §7): MemoryWritten,
// MemoryUpdated and MemoryDeleted events fold into memory_versions (every
// version, with its validity interval), memories (the current version of
// each live memory, indexed by memory_fts; its triggers keep memory_rank,
// what retrieval filters and ranks by, schema 12) and memory_forgotten.
//
// The rules a memory must keep are checked here, at append, so they hold
// for every way an event arrives (ctxdb_memory_write, a raw append, a
// batch, an import): source refs (invariant 10), a scope and scope id, an
// expiry or update policy for every scope above session (invariant 11), an
// expiry after the event's ts. A TTL becomes expires_at from the event's
// ts: the projection never reads the clock, so rebuild reproduces it.
//
// A purge (memory/purger.hpp) removes the payloads of the memory's earlier
// events from the log. A replay skips an event whose payload was removed,
// and the purge itself then ends the memory: no row of it is left but its
// memory_forgotten row, at append as after a rebuild.
#pragma once

#include "log/event_log.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ctxdb::memory {

inline constexpr std::string_view kScopes[] = {"global",    "user",    "org",
                                               "workspace", "project", "session"};

// What memory_list returns (memory_list_query.schema.json).
struct ListQuery {
  std::optional<std::string> scope;
  std::optional<std::string> scope_id;
  std::optional<std::string> kind;
  bool all_versions = false;
  std::optional<int64_t> as_of;
  int64_t limit = 1000;
};

// The events that name a memory, oldest first: what a purge removes.
struct Trail {
  std::vector<std::string> event_ids;
  int64_t last_session_no = 0; // where the last of them was appended
  std::string forgotten_mode;  // "", "tombstone" or "purge"
};

class Memories : public project::Projection {
public:
  Memories(store::Store &store, project::PayloadCache &payloads)
      : store_(store), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override;
  std::span<const char *const> tables() const override;

  // A memory as memory.schema.json: its current version, or its last one
  // once forgotten (content null). kNotFound for an unknown or purged id.
  std::string get_json(std::string_view memory_id);
  // A JSON array of memory.schema.json objects, by memory id and version.
  std::string list_json(const ListQuery &q);
  // nullopt for an unknown id; a purged memory has no events left to name.
  std::optional<Trail> trail(std::string_view memory_id);

private:
  struct Version;
  void write(const log::Event &e, simdjson::dom::element p);
  void update(const log::Event &e, simdjson::dom::element p);
  void remove(const log::Event &e, simdjson::dom::element p);
  std::optional<Version> current(const std::string &memory_id);
  // "", "tombstone" or "purge".
  std::string forgotten_mode(const std::string &memory_id);
  void insert_version(const log::Event &e, const std::string &memory_id, const Version &v);
  void write_current(const log::Event &e, const std::string &memory_id, const Version &v,
                     bool insert);
  // kNotFound / kConflict for an Updated or Deleted of a memory that is
  // not live.
  [[noreturn]] void not_live(const log::Event &e, const std::string &memory_id);
  void check_not_before(const log::Event &e, const Version &v);

  // What the transaction does to a memory's memories row (and, by its
  // triggers, to its memory_fts and memory_rank rows), written by flush()
  // with the new rows in one statement, in doc_id order. FTS5 flushes its
  // pending terms into a new segment at every statement savepoint (each
  // INSERT into memories opens one) and whenever a rowid is lower than the
  // last one the transaction wrote (the scope ranges, scope_rows.hpp, make
  // that so for nearly every memory of a mixed batch in log order): row by
  // row, a batch left a segment per memory for FTS5's merges to fold.
  struct Row {
    int64_t doc_id = 0;
    bool existed = false; // in memories before the transaction
    bool live = false;    // false: delete it
    int64_t version = 0, priority = 0, valid_from = 0;
    std::string scope_key, search_content, search_keywords;
    std::optional<std::string> readers;
    std::optional<int64_t> expires_at;
    double confidence = 0;
    bool sensitive = false;
  };
  // The memory's pending row, read from memories when it has none yet.
  Row &row(const std::string &memory_id);
  void drop_current(const std::string &memory_id);

  store::Store &store_;
  project::PayloadCache &payloads_;
  std::unordered_map<std::string, Row> rows_; // by memory_id
};

} // namespace ctxdb::memory
